// The vision phase of a VLM's schedule (schema 1.4) in pshard-inspect's tables and in
// pshard-diff: the same views the language plans get, so that a change of the vision
// plans shows in CI's schedule diffs too. Vision plans are budget-major, one per
// (Schedule budget, image-size tier), and are paired by that index.
#include "tools/schedule/schedule_report.h"

#include <cstdio>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

std::string str(const flatbuffers::String* s) { return s ? s->str() : ""; }

template <class T> size_t size_of(const flatbuffers::Vector<T>* v) { return v ? v->size() : 0; }

std::string letters(const sfb::VisionPlan& p) {
  std::string out;
  if (p.placements())
    for (auto q : *p.placements())
      out += q == sfb::Placement::GpuResident ? 'R' : q == sfb::Placement::GpuStreamed ? 'S' : 'C';
  return out;
}

std::string tier_name(const sfb::VisionPhase& v, size_t t) {
  const std::string name = t < size_of(v.tier_names()) ? str(v.tier_names()->Get(t)) : "";
  const std::string patches = t < size_of(v.tiers()) ? std::to_string(v.tiers()->Get(t)) : "?";
  return name.empty() ? patches : name + " (" + patches + ")";
}

std::string sublayer_name(const sfb::VisionPhase& v, size_t i) {
  return i < size_of(v.sublayers()) ? str(v.sublayers()->Get(i)->name()) : std::to_string(i);
}

// The vision phases of two artifacts can be paired plan by plan.
bool comparable(const sfb::VisionPhase& a, const sfb::VisionPhase& b, std::ostream& out) {
  bool same = size_of(a.sublayers()) == size_of(b.sublayers()) &&
              size_of(a.tiers()) == size_of(b.tiers()) &&
              size_of(a.plans()) == size_of(b.plans());
  for (size_t i = 0; same && i < size_of(a.sublayers()); ++i)
    same = sublayer_name(a, i) == sublayer_name(b, i);
  for (size_t t = 0; same && t < size_of(a.tiers()); ++t)
    same = a.tiers()->Get(t) == b.tiers()->Get(t);
  if (!same)
    out << "incompatible: the vision phases differ in sub-layers, image-size tiers or plans ("
        << size_of(a.sublayers()) << " sub-layers, " << size_of(a.tiers()) << " tiers vs "
        << size_of(b.sublayers()) << ", " << size_of(b.tiers()) << ")\n";
  return same;
}

} // namespace

void print_vision_tables(const Schedule& schedule, std::ostream& out) {
  const sfb::VisionPhase* v = schedule.vision();
  if (!v)
    return;
  char line[256];
  std::snprintf(line, sizeof line, "%016llx%016llx",
                static_cast<unsigned long long>(v->fingerprint_hi()),
                static_cast<unsigned long long>(v->fingerprint_lo()));
  out << "\nvision phase: projector " << str(v->projector_type()) << ", "
      << size_of(v->sublayers()) << " sub-layers, weights "
      << format_bytes(v->total_weight_bytes()) << "; fingerprint " << line << "\n";
  for (size_t i = 0; i < size_of(v->sublayers()); ++i) {
    const auto* sub = v->sublayers()->Get(static_cast<flatbuffers::uoffset_t>(i));
    std::snprintf(line, sizeof line, "  %3zu %-12s %2u tensors %12s\n", i,
                  str(sub->name()).c_str(), static_cast<unsigned>(size_of(sub->tensors())),
                  format_bytes(sub->weight_bytes()).c_str());
    out << line;
  }
  out << "vision plans (one image of the tier's patches; R resident, S streamed, C cpu):\n";
  std::snprintf(line, sizeof line, "  %-11s %-16s %-9s %6s %10s %10s %10s %11s %11s  %s\n",
                "budget", "image (patches)", "strategy", "tile", "workspace", "VRAM", "ms",
                "reload ms", "slots", "placements");
  out << line;
  const size_t n_tiers = size_of(v->tiers());
  for (size_t i = 0; i < size_of(v->plans()); ++i) {
    const sfb::VisionPlan& p = *v->plans()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const std::string slots = std::to_string(p.stream_slot_count()) + " × " +
                              format_bytes(p.stream_slot_bytes());
    std::snprintf(line, sizeof line, "  %-11s %-16s %-9s %6lld %10s %10s %10.2f %11.2f %11s  %s\n",
                  n_tiers && i % n_tiers == 0 ? format_bytes(p.budget_bytes()).c_str() : "",
                  tier_name(*v, n_tiers ? i % n_tiers : 0).c_str(), str(p.strategy()).c_str(),
                  static_cast<long long>(p.attention_tile()),
                  format_bytes(p.workspace_bytes()).c_str(), format_bytes(p.arena_bytes()).c_str(),
                  p.predicted_ms(), p.language_reload_ms(), slots.c_str(), letters(p).c_str());
    out << line;
  }
}

void diff_vision_plans(const Schedule& a, const Schedule& b, const DiffOptions& options,
                       std::ostream& out, DiffResult& r) {
  const sfb::VisionPhase* x = a.vision();
  const sfb::VisionPhase* y = b.vision();
  if (!x && !y)
    return;
  if (!x || !y) {
    out << "incompatible: only the " << (x ? "old" : "new")
        << " artifact plans a vision phase (pshard-compile --mmproj)\n";
    r.incompatible = true;
    return;
  }
  if (!comparable(*x, *y, out)) {
    r.incompatible = true;
    return;
  }
  if (x->fingerprint_hi() != y->fingerprint_hi() || x->fingerprint_lo() != y->fingerprint_lo())
    out << "note: projector fingerprints differ\n";
  const size_t n_tiers = size_of(x->tiers());
  char line[256];
  for (size_t i = 0; i < size_of(x->plans()); ++i) {
    const sfb::VisionPlan& p = *x->plans()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const sfb::VisionPlan& q = *y->plans()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const double delta = p.predicted_ms() > 0 ? q.predicted_ms() / p.predicted_ms() - 1.0 : 0.0;
    const bool regressed = delta > options.tolerance, improved = delta < -options.tolerance;
    const std::string before = letters(p), after = letters(q);
    const bool moved = before != after || p.attention_tile() != q.attention_tile();
    r.regressions += regressed;
    r.improvements += improved;
    r.placement_changes += moved;
    std::snprintf(line, sizeof line,
                  "vision %-11s image %-16s: %-9s -> %-9s %10.3f -> %10.3f ms (%+6.2f%%)%s\n",
                  format_bytes(p.budget_bytes()).c_str(), tier_name(*x, n_tiers ? i % n_tiers : 0).c_str(),
                  str(p.strategy()).c_str(), str(q.strategy()).c_str(), p.predicted_ms(),
                  q.predicted_ms(), delta * 100.0,
                  regressed ? "  REGRESSION" : improved ? "  faster" : "");
    out << line;
    for (size_t s = 0; s < before.size() && s < after.size(); ++s)
      if (before[s] != after[s])
        out << "    " << sublayer_name(*x, s) << ": " << before[s] << " -> " << after[s] << "\n";
    if (p.attention_tile() != q.attention_tile())
      out << "    attention tile: " << p.attention_tile() << " -> " << q.attention_tile() << "\n";
  }
}

} // namespace pshard
