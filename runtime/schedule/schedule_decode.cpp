// From a verified FlatBuffer to the plans the executor reads, checking what the
// Verifier cannot: that the grid is complete (every budget × context range × tier) and
// every plan is self-consistent (one placement per sub-layer, buffers inside an arena no
// larger than the budget), and that every switch names plans that exist. A file that
// passes is safe to execute; one that does not is refused with the plan named.
#include "runtime/model/kv_ring.h"
#include "runtime/schedule/schedule_file.h"

#include <algorithm>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

std::string plan_name(size_t b, size_t t, uint64_t budget, int64_t tier, int64_t context) {
  return "plan [budget " + std::to_string(b) + " = " + std::to_string(budget) + " B, tier " +
         std::to_string(t) + " = " + std::to_string(tier) + ", context " + std::to_string(context) +
         "]";
}

Status corrupt(const std::string& what) {
  return invalid_format("inconsistent pshard schedule: " + what +
                        "; recompile it with pshard-compile");
}

// 1.5's expert-level MoE blocks: streamed sub-layers, ids ascending, each expert in at
// most one of resident and copied, and exactly the resident ones in Expert buffers.
Status decode_experts(const sfb::Plan& in, const std::string& name, size_t n_sublayers,
                      SchedulePlan* out) {
  if (!in.experts())
    return Status::ok_status();
  for (const sfb::PlanExperts* x : *in.experts()) {
    SchedulePlan::Experts e;
    e.sublayer = x->sublayer();
    const std::string what = name + "'s expert-level sub-layer " + std::to_string(e.sublayer);
    if (e.sublayer < 0 || static_cast<size_t>(e.sublayer) >= n_sublayers ||
        out->placements[static_cast<size_t>(e.sublayer)] != sfb::Placement::GpuStreamed)
      return corrupt(what + " is not a gpu_streamed sub-layer of the model");
    if (out->experts_of(static_cast<size_t>(e.sublayer)))
      return corrupt(what + " is listed twice");
    if (x->resident())
      e.resident.assign(x->resident()->begin(), x->resident()->end());
    if (x->copied())
      e.copied.assign(x->copied()->begin(), x->copied()->end());
    for (const std::vector<int32_t>* ids : {&e.resident, &e.copied})
      for (size_t k = 0; k < ids->size(); ++k)
        if ((*ids)[k] < 0 || (k > 0 && (*ids)[k] <= (*ids)[k - 1]))
          return corrupt(what + " lists expert ids that are negative or not ascending");
    for (int32_t id : e.copied)
      if (std::binary_search(e.resident.begin(), e.resident.end(), id))
        return corrupt(what + " both keeps and copies expert " + std::to_string(id));
    size_t buffers = 0;
    for (const SchedulePlan::Buffer& b : out->vram_layout)
      if (b.kind == sfb::BufferKind::Expert && b.sublayer == e.sublayer) {
        if (!std::binary_search(e.resident.begin(), e.resident.end(), b.index))
          return corrupt(what + " has a VRAM buffer for expert " + std::to_string(b.index) +
                         ", which it does not keep resident");
        ++buffers;
      }
    if (buffers != e.resident.size())
      return corrupt(what + " keeps " + std::to_string(e.resident.size()) + " experts resident but lays out " +
                     std::to_string(buffers));
    e.resident_bytes = x->resident_bytes();
    e.expected_copy_bytes = x->expected_copy_bytes();
    e.expected_cpu_experts = x->expected_cpu_experts();
    out->experts.push_back(std::move(e));
  }
  return Status::ok_status();
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
  // 1.2 fields; 1.0/1.1 files plan one range (context set by the caller) and one figure.
  out->context_start = std::max<int64_t>(in.context_start(), 1);
  out->predicted_ms_at_context_start = in.predicted_ms_at_context_start() > 0
                                           ? in.predicted_ms_at_context_start()
                                           : in.predicted_ms_per_pass();
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
      out->vram_layout.push_back({b->kind(), b->sublayer(), b->index(), b->offset(), b->size()});
    }
  return decode_experts(in, name, n_sublayers, out);
}

template <typename T> size_t index_of(const std::vector<T>& v, T x) {
  return static_cast<size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

} // namespace

const SchedulePlan::Experts* SchedulePlan::experts_of(size_t sublayer) const {
  for (const Experts& e : experts)
    if (e.sublayer == static_cast<int32_t>(sublayer))
      return &e;
  return nullptr;
}

double SchedulePlan::predicted_ms_at(int64_t positions) const {
  if (context <= context_start)
    return predicted_ms_per_pass;
  const double f = std::clamp(static_cast<double>(positions - context_start) /
                                  static_cast<double>(context - context_start),
                              0.0, 1.0);
  return predicted_ms_at_context_start +
         f * (predicted_ms_per_pass - predicted_ms_at_context_start);
}

uint64_t ScheduleSwitch::kv_upload_bytes(int64_t positions, int64_t ring) const {
  return kv_bytes_moved(kv_upload_bytes_per_position, kv_ring_upload_bytes_per_position, positions,
                        ring);
}

uint64_t ScheduleSwitch::kv_download_bytes(int64_t positions, int64_t ring) const {
  return kv_bytes_moved(kv_download_bytes_per_position, kv_ring_download_bytes_per_position,
                        positions, ring);
}

double ScheduleLink::h2d_ms(uint64_t bytes) const {
  return bytes == 0
             ? 0
             : (static_cast<double>(h2d_latency_ns) +
                static_cast<double>(bytes) * static_cast<double>(h2d_ns_per_mib) / (1 << 20)) *
                   1e-6;
}

double ScheduleLink::d2h_ms(uint64_t bytes) const {
  return bytes == 0
             ? 0
             : (static_cast<double>(d2h_latency_ns) +
                static_cast<double>(bytes) * static_cast<double>(d2h_ns_per_mib) / (1 << 20)) *
                   1e-6;
}

Status Schedule::decode_budget(size_t b, const sfb::BudgetPlans& row, uint64_t budget,
                               std::vector<SchedulePlan>* out,
                               std::vector<ScheduleSwitch>* switches) const {
  const size_t n_sublayers = root().sublayers()->size();
  const size_t shorter = row.shorter_contexts() ? row.shorter_contexts()->size() : 0;
  if (shorter + 1 != contexts_.size())
    return corrupt("budget " + std::to_string(budget) + " has plans for " +
                   std::to_string(shorter + 1) + " context ranges, the options list " +
                   std::to_string(contexts_.size()));
  for (size_t c = 0; c < contexts_.size(); ++c) {
    const bool last = c + 1 == contexts_.size();
    const flatbuffers::Vector<flatbuffers::Offset<sfb::Plan>>* plans = nullptr;
    if (last) {
      plans = row.plans();
    } else {
      const sfb::ContextPlans* range =
          row.shorter_contexts()->Get(static_cast<flatbuffers::uoffset_t>(c));
      if (range->context() != contexts_[c])
        return corrupt("budget " + std::to_string(budget) + " files the plans of context " +
                       std::to_string(range->context()) + " where context " +
                       std::to_string(contexts_[c]) + " belongs");
      plans = range->plans();
    }
    if (!plans || plans->size() != tiers_.size())
      return corrupt("budget " + std::to_string(budget) + " has " +
                     std::to_string(plans ? plans->size() : 0) + " plans for " +
                     std::to_string(tiers_.size()) + " tiers at context " +
                     std::to_string(contexts_[c]));
    for (size_t t = 0; t < tiers_.size(); ++t) {
      const sfb::Plan* in = plans->Get(static_cast<flatbuffers::uoffset_t>(t));
      const std::string name = plan_name(b, t, budget, tiers_[t], contexts_[c]);
      SchedulePlan plan;
      PSHARD_RETURN_IF_ERROR(decode_plan(*in, n_sublayers, name, &plan));
      plan.context = in->context() > 0 ? in->context() : contexts_[c];
      if (plan.budget_bytes != budget || plan.tier != tiers_[t] || plan.context != contexts_[c])
        return corrupt(name + " says budget " + std::to_string(plan.budget_bytes) + ", tier " +
                       std::to_string(plan.tier) + ", context " + std::to_string(plan.context));
      if (plan.context_start > plan.context)
        return corrupt(name + " serves contexts from " + std::to_string(plan.context_start) +
                       ", past its range's end");
      out->push_back(std::move(plan));
    }
  }
  if (row.switches())
    for (const sfb::PlanSwitch* in : *row.switches()) {
      ScheduleSwitch s;
      s.from_context = index_of(contexts_, in->from_context());
      s.to_context = index_of(contexts_, in->to_context());
      s.from_tier = index_of(tiers_, in->from_tier());
      s.to_tier = index_of(tiers_, in->to_tier());
      if (s.from_context == contexts_.size() || s.to_context == contexts_.size() ||
          s.from_tier == tiers_.size() || s.to_tier == tiers_.size())
        return corrupt("budget " + std::to_string(budget) +
                       " records a switch between plans it does not have");
      s.upload_bytes = in->upload_bytes();
      s.evict_bytes = in->evict_bytes();
      s.kv_upload_bytes_per_position = in->kv_upload_bytes_per_position();
      s.kv_download_bytes_per_position = in->kv_download_bytes_per_position();
      s.kv_ring_upload_bytes_per_position = in->kv_ring_upload_bytes_per_position();
      s.kv_ring_download_bytes_per_position = in->kv_ring_download_bytes_per_position();
      if (s.kv_ring_upload_bytes_per_position > s.kv_upload_bytes_per_position ||
          s.kv_ring_download_bytes_per_position > s.kv_download_bytes_per_position)
        return corrupt("budget " + std::to_string(budget) +
                       " records a switch whose ring caches move more than all its caches");
      s.state_upload_bytes = in->state_upload_bytes();
      s.state_download_bytes = in->state_download_bytes();
      s.priced_positions = in->priced_positions();
      s.predicted_ms = in->predicted_ms();
      switches->push_back(s);
    }
  return Status::ok_status();
}

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
  const sfb::CompileOptions* o = s.options();
  const int64_t n_ctx = o ? o->n_ctx() : 0;
  contexts_.clear();
  if (o && o->contexts() && o->contexts()->size() > 0)
    contexts_.assign(o->contexts()->begin(), o->contexts()->end());
  else
    contexts_.push_back(n_ctx);
  if (!std::is_sorted(contexts_.begin(), contexts_.end()) ||
      std::adjacent_find(contexts_.begin(), contexts_.end()) != contexts_.end() ||
      contexts_.front() < 1 || contexts_.back() != n_ctx)
    return corrupt("the context ranges must ascend and end at the compiled context");
  if (o) {
    link_.h2d_latency_ns = o->link_h2d_latency_ns();
    link_.h2d_ns_per_mib = o->link_h2d_ns_per_mib();
    link_.d2h_latency_ns = o->link_d2h_latency_ns();
    link_.d2h_ns_per_mib = o->link_d2h_ns_per_mib();
  }
  kv_ring_ = o ? o->kv_ring_positions() : 0;
  if (kv_ring_ < 0)
    return corrupt("the sliding-window caches' ring of " + std::to_string(kv_ring_) +
                   " positions is negative");
  if (s.grid()->size() != budgets_.size())
    return corrupt("the grid has " + std::to_string(s.grid()->size()) + " budgets, the header " +
                   std::to_string(budgets_.size()));
  plans_.clear();
  plans_.reserve(budgets_.size() * contexts_.size() * tiers_.size());
  switches_.assign(budgets_.size(), {});
  for (size_t b = 0; b < budgets_.size(); ++b)
    PSHARD_RETURN_IF_ERROR(decode_budget(b, *s.grid()->Get(static_cast<flatbuffers::uoffset_t>(b)),
                                         budgets_[b], &plans_, &switches_[b]));
  if (o && o->parallel() < 0)
    return corrupt("the schedule was compiled for " + std::to_string(o->parallel()) +
                   " parallel sequences");
  for (SchedulePlan& p : plans_) // 1.3; older files sized every plan for one sequence
    p.sequences = o ? std::max<int64_t>(o->parallel(), 1) : 1;
  cpu_only_.clear();
  if (s.cpu_only()) {
    std::vector<ScheduleSwitch> none;
    PSHARD_RETURN_IF_ERROR(decode_budget(budgets_.size(), *s.cpu_only(), 0, &cpu_only_, &none));
    for (const SchedulePlan& p : cpu_only_)
      if (std::any_of(p.placements.begin(), p.placements.end(),
                      [](sfb::Placement q) { return q != sfb::Placement::Cpu; }))
        return corrupt("a CPU-only plan places a sub-layer on the GPU");
  }
  return Status::ok_status();
}

const SchedulePlan* Schedule::cpu_only_plan(size_t context, size_t tier) const {
  if (!cpu_only_.empty())
    return &cpu_only_[context * tiers_.size() + tier];
  if (budgets_.front() == 0)
    return &plan({0, tier, context});
  return nullptr;
}

const ScheduleSwitch* Schedule::find_switch(size_t budget, PlanIndex from, PlanIndex to) const {
  for (const ScheduleSwitch& s : switches_[budget])
    if (s.from_context == from.context && s.from_tier == from.tier && s.to_context == to.context &&
        s.to_tier == to.tier)
      return &s;
  return nullptr;
}

size_t Schedule::context_index(int64_t positions) const {
  for (size_t c = 0; c < contexts_.size(); ++c)
    if (contexts_[c] >= positions)
      return c;
  return contexts_.size() - 1;
}

Result<PlanIndex> Schedule::select(int64_t n_tokens, uint64_t vram_available,
                                   int64_t positions) const {
  if (n_tokens < 1)
    return invalid_argument("a forward pass needs at least one new token");
  PlanIndex at;
  at.tier = tiers_.size() - 1;
  for (size_t t = 0; t < tiers_.size(); ++t)
    if (tiers_[t] >= n_tokens) {
      at.tier = t;
      break;
    }
  at.context = context_index(positions);
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
