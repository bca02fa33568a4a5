// What changed between two schedule artifacts, plan by plan. Plans are paired by
// (budget, context range, tier); artifacts for different sub-layer tables cannot be
// compared at all. The switches of each budget are compared by what they move.
#include "tools/schedule/schedule_report.h"

#include <cstdio>
#include <string>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

std::string sublayer_name(const Schedule& s, size_t i) {
  const auto* sub = s.root().sublayers()->Get(static_cast<flatbuffers::uoffset_t>(i));
  return sub->name() ? sub->name()->str() : std::to_string(i);
}

const char* short_name(sfb::Placement p) {
  return p == sfb::Placement::GpuResident ? "gpu_resident"
         : p == sfb::Placement::GpuStreamed ? "gpu_streamed" : "cpu";
}

bool same_switches(const Schedule& a, const Schedule& b, size_t budget) {
  const auto& x = a.switches(budget);
  const auto& y = b.switches(budget);
  if (x.size() != y.size())
    return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].from_context != y[i].from_context || x[i].from_tier != y[i].from_tier ||
        x[i].to_context != y[i].to_context || x[i].to_tier != y[i].to_tier ||
        x[i].upload_bytes != y[i].upload_bytes || x[i].evict_bytes != y[i].evict_bytes ||
        x[i].kv_upload_bytes_per_position != y[i].kv_upload_bytes_per_position ||
        x[i].kv_download_bytes_per_position != y[i].kv_download_bytes_per_position ||
        x[i].kv_ring_upload_bytes_per_position != y[i].kv_ring_upload_bytes_per_position ||
        x[i].kv_ring_download_bytes_per_position != y[i].kv_ring_download_bytes_per_position ||
        x[i].state_upload_bytes != y[i].state_upload_bytes ||
        x[i].state_download_bytes != y[i].state_download_bytes)
      return false;
  return true;
}

bool same_sublayers(const Schedule& a, const Schedule& b) {
  const auto* x = a.root().sublayers();
  const auto* y = b.root().sublayers();
  if (x->size() != y->size())
    return false;
  for (flatbuffers::uoffset_t i = 0; i < x->size(); ++i)
    if (sublayer_name(a, i) != sublayer_name(b, i))
      return false;
  return true;
}

} // namespace

DiffResult diff_schedules(const Schedule& a, const Schedule& b, const DiffOptions& options,
                          std::ostream& out) {
  DiffResult r;
  if (!same_sublayers(a, b)) {
    out << "incompatible: the artifacts describe different sub-layer tables ("
        << a.root().sublayers()->size() << " vs " << b.root().sublayers()->size() << ")\n";
    r.incompatible = true;
    return r;
  }
  if (a.model_fingerprint() != b.model_fingerprint())
    out << "note: model fingerprints differ (" << a.model_fingerprint().hex() << " -> "
        << b.model_fingerprint().hex() << ")\n";
  if (a.budgets() != b.budgets() || a.tiers() != b.tiers() || a.contexts() != b.contexts()) {
    out << "incompatible: the plan grids differ (budgets, tiers or context ranges changed)\n";
    r.incompatible = true;
    return r;
  }
  if (a.kv_ring_positions() != b.kv_ring_positions())
    out << "note: sliding-window caches: "
        << (a.kv_ring_positions() ? "rings of " + std::to_string(a.kv_ring_positions()) : "whole")
        << " -> "
        << (b.kv_ring_positions() ? "rings of " + std::to_string(b.kv_ring_positions()) : "whole")
        << " positions\n";
  char line[256];
  for (size_t bi = 0; bi < a.budgets().size(); ++bi) {
    for (size_t ci = 0; ci < a.contexts().size(); ++ci)
    for (size_t ti = 0; ti < a.tiers().size(); ++ti) {
      const SchedulePlan& p = a.plan({bi, ti, ci});
      const SchedulePlan& q = b.plan({bi, ti, ci});
      const double delta = p.predicted_ms_per_pass > 0
                               ? q.predicted_ms_per_pass / p.predicted_ms_per_pass - 1.0 : 0.0;
      const bool regressed = delta > options.tolerance;
      const bool improved = delta < -options.tolerance;
      const bool moved = p.placements != q.placements;
      r.regressions += regressed;
      r.improvements += improved;
      r.placement_changes += moved;
      std::snprintf(line, sizeof line,
                    "%-11s context %6lld tier %4lld: %-9s -> %-9s %10.3f -> %10.3f ms (%+6.2f%%)%s\n",
                    format_bytes(p.budget_bytes).c_str(), static_cast<long long>(p.context),
                    static_cast<long long>(p.tier),
                    p.strategy.c_str(), q.strategy.c_str(), p.predicted_ms_per_pass,
                    q.predicted_ms_per_pass, delta * 100.0,
                    regressed ? "  REGRESSION" : improved ? "  faster" : "");
      out << line;
      if (moved)
        for (size_t i = 0; i < p.placements.size(); ++i)
          if (p.placements[i] != q.placements[i])
            out << "    " << sublayer_name(a, i) << ": " << short_name(p.placements[i]) << " -> "
                << short_name(q.placements[i]) << "\n";
    }
    if (!same_switches(a, b, bi)) {
      ++r.switch_changes;
      out << format_bytes(a.budgets()[bi]) << ": the switches between its plans move other bytes ("
          << a.switches(bi).size() << " -> " << b.switches(bi).size() << " switches)\n";
    }
  }
  diff_vision_plans(a, b, options, out, r);
  if (r.incompatible)
    return r;
  out << r.regressions << " regression(s) past " << options.tolerance * 100.0 << "%, "
      << r.improvements << " improvement(s), " << r.placement_changes
      << " plan(s) with placement changes, " << r.switch_changes
      << " budget(s) with switch changes\n";
  return r;
}

} // namespace pshard
