// From a verified FlatBuffer to the plans the executor reads, checking what the
// Verifier cannot: that the grid is complete and every plan is self-consistent (one
// placement per sub-layer, buffers inside an arena no larger than the budget). A file
// that passes is safe to execute; one that does not is refused with the plan named.
#include "runtime/schedule/schedule_file.h"

#include <algorithm>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

std::string plan_name(size_t b, size_t t, uint64_t budget, int64_t tier) {
  return "plan [budget " + std::to_string(b) + " = " + std::to_string(budget) + " B, tier " +
         std::to_string(t) + " = " + std::to_string(tier) + "]";
}

Status corrupt(const std::string& what) {
  return invalid_format("inconsistent pshard schedule: " + what +
                        "; recompile it with pshard-compile");
}

Status decode_plan(const sfb::Plan& in, size_t n_sublayers, const std::string& name,
                   SchedulePlan* out) {
  out->budget_bytes = in.budget_bytes();
  out->tier = in.tier();
  out->strategy = in.strategy() ? in.strategy()->str() : "";
  if (!in.placements() || in.placements()->size() != n_sublayers)
    return corrupt(name + " places " +
                   std::to_string(in.placements() ? in.placements()->size() : 0) +
                   " sub-layers, the model has " + std::to_string(n_sublayers));
  for (auto p : *in.placements()) {
    const auto placement = static_cast<sfb::Placement>(p);
    if (placement > sfb::Placement::MAX)
      return corrupt(name + " has an unknown placement " + std::to_string(static_cast<int>(p)));
    out->placements.push_back(placement);
  }
  if (in.stream_order())
    for (int32_t s : *in.stream_order()) {
      if (s < 0 || static_cast<size_t>(s) >= n_sublayers ||
          out->placements[static_cast<size_t>(s)] != sfb::Placement::GpuStreamed)
        return corrupt(name + " streams sub-layer " + std::to_string(s) +
                       ", which is not a gpu_streamed sub-layer");
      out->stream_order.push_back(s);
    }
  out->prefetch_depth = in.prefetch_depth();
  out->stream_slot_count = in.stream_slot_count();
  out->stream_slot_bytes = in.stream_slot_bytes();
  out->arena_bytes = in.arena_bytes();
  out->cpu_threads = in.cpu_threads();
  out->predicted_ms_per_pass = in.predicted_ms_per_pass();
  out->predicted_tokens_per_s = in.predicted_tokens_per_s();
  if (out->arena_bytes > out->budget_bytes)
    return corrupt(name + " needs an arena of " + std::to_string(out->arena_bytes) +
                   " B, more than its budget");
  if (!out->stream_order.empty() && out->stream_slot_count < 1)
    return corrupt(name + " streams weights but has no streaming slot");
  if (in.vram_layout())
    for (const sfb::VramBuffer* b : *in.vram_layout()) {
      if (b->offset() > out->arena_bytes || b->size() > out->arena_bytes - b->offset())
        return corrupt(name + " has a buffer at " + std::to_string(b->offset()) + " + " +
                       std::to_string(b->size()) + " outside its arena of " +
                       std::to_string(out->arena_bytes) + " B");
      if (b->sublayer() >= 0 && static_cast<size_t>(b->sublayer()) >= n_sublayers)
        return corrupt(name + " has a buffer for sub-layer " + std::to_string(b->sublayer()) +
                       ", past the model's " + std::to_string(n_sublayers));
      out->vram_layout.push_back(
          {b->kind(), b->sublayer(), b->index(), b->offset(), b->size()});
    }
  return Status::ok_status();
}

} // namespace

Status Schedule::decode() {
  const sfb::Schedule& s = root();
  if (!s.model() || !s.sublayers() || !s.budgets() || !s.tiers() || !s.grid())
    return corrupt("a required table (model, sublayers, budgets, tiers or grid) is missing");
  budgets_.assign(s.budgets()->begin(), s.budgets()->end());
  tiers_.assign(s.tiers()->begin(), s.tiers()->end());
  if (budgets_.empty() || tiers_.empty())
    return corrupt("the plan grid is empty");
  if (!std::is_sorted(budgets_.begin(), budgets_.end()) ||
      !std::is_sorted(tiers_.begin(), tiers_.end()) || tiers_.front() < 1)
    return corrupt("budgets and tiers must be ascending and tiers ≥ 1");
  if (s.grid()->size() != budgets_.size())
    return corrupt("the grid has " + std::to_string(s.grid()->size()) + " budgets, the header " +
                   std::to_string(budgets_.size()));
  const size_t n_sublayers = s.sublayers()->size();
  plans_.clear();
  plans_.reserve(budgets_.size() * tiers_.size());
  for (size_t b = 0; b < budgets_.size(); ++b) {
    const sfb::BudgetPlans* row = s.grid()->Get(static_cast<flatbuffers::uoffset_t>(b));
    if (!row->plans() || row->plans()->size() != tiers_.size())
      return corrupt("budget " + std::to_string(budgets_[b]) + " has " +
                     std::to_string(row->plans() ? row->plans()->size() : 0) + " plans for " +
                     std::to_string(tiers_.size()) + " tiers");
    for (size_t t = 0; t < tiers_.size(); ++t) {
      const sfb::Plan* in = row->plans()->Get(static_cast<flatbuffers::uoffset_t>(t));
      const std::string name = plan_name(b, t, budgets_[b], tiers_[t]);
      SchedulePlan plan;
      PSHARD_RETURN_IF_ERROR(decode_plan(*in, n_sublayers, name, &plan));
      if (plan.budget_bytes != budgets_[b] || plan.tier != tiers_[t])
        return corrupt(name + " says budget " + std::to_string(plan.budget_bytes) + ", tier " +
                       std::to_string(plan.tier));
      plans_.push_back(std::move(plan));
    }
  }
  return Status::ok_status();
}

Result<PlanIndex> Schedule::select(int64_t n_tokens, uint64_t vram_available) const {
  if (n_tokens < 1)
    return invalid_argument("a forward pass needs at least one new token");
  PlanIndex at;
  at.tier = tiers_.size() - 1;
  for (size_t t = 0; t < tiers_.size(); ++t)
    if (tiers_[t] >= n_tokens) {
      at.tier = t;
      break;
    }
  if (budgets_.front() > vram_available)
    return Status(StatusCode::kOutOfMemory,
                  "no compiled budget fits " + std::to_string(vram_available) +
                      " B of VRAM: the smallest is " + std::to_string(budgets_.front()) +
                      " B; recompile with a smaller --budgets entry (0 plans CPU only)");
  for (size_t b = 0; b < budgets_.size(); ++b)
    if (budgets_[b] <= vram_available)
      at.budget = b;
  return at;
}

} // namespace pshard
