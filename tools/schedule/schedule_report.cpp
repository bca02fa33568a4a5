// Tables of a schedule artifact. Columns are fixed-width so that the summary lines up in
// a terminal and in CI logs.
#include "tools/schedule/schedule_report.h"

#include <algorithm>
#include <cstdio>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

std::string str(const flatbuffers::String* s) { return s ? s->str() : ""; }

int count(const SchedulePlan& p, sfb::Placement q) {
  int n = 0;
  for (auto x : p.placements)
    n += x == q;
  return n;
}

std::string printf_string(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

// How many files of a split GGUF the sub-layers' tensors lie in (1 when unsplit).
uint32_t files_holding_tensors(const sfb::Schedule& s) {
  uint32_t last = 0;
  for (const auto* sub : *s.sublayers())
    if (sub->tensors())
      for (const auto* t : *sub->tensors())
        last = std::max(last, t->shard());
  return last + 1;
}

} // namespace

std::string format_bytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ull << 30))
    return printf_string("%.2f GiB", b / (1ull << 30));
  if (bytes >= (1ull << 20))
    return printf_string("%.1f MiB", b / (1ull << 20));
  if (bytes >= (1ull << 10))
    return printf_string("%.1f KiB", b / (1ull << 10));
  return std::to_string(bytes) + " B";
}

std::string placement_letters(const SchedulePlan& plan) {
  std::string out;
  for (auto p : plan.placements)
    out += p == sfb::Placement::GpuResident ? 'R' : p == sfb::Placement::GpuStreamed ? 'S' : 'C';
  return out;
}

void print_summary(const Schedule& schedule, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "%-11s %5s  %-9s %5s %5s %5s %12s %11s %11s\n", "budget", "tier",
                "strategy", "res", "str", "cpu", "ms/pass", "tokens/s", "VRAM");
  out << line;
  for (size_t b = 0; b < schedule.budgets().size(); ++b)
    for (size_t t = 0; t < schedule.tiers().size(); ++t) {
      const SchedulePlan& p = schedule.plan({b, t});
      std::snprintf(line, sizeof line, "%-11s %5lld  %-9s %5d %5d %5d %12.3f %11.1f %11s\n",
                    t == 0 ? format_bytes(p.budget_bytes).c_str() : "",
                    static_cast<long long>(p.tier), p.strategy.c_str(),
                    count(p, sfb::Placement::GpuResident), count(p, sfb::Placement::GpuStreamed),
                    count(p, sfb::Placement::Cpu), p.predicted_ms_per_pass,
                    p.predicted_tokens_per_s, format_bytes(p.arena_bytes).c_str());
      out << line;
    }
}

void print_schedule_tables(const Schedule& schedule, std::ostream& out) {
  const sfb::Schedule& s = schedule.root();
  out << "pshard schedule " << s.schema_major() << "." << s.schema_minor() << ", written by "
      << str(s.created_by()) << "\n";
  if (const auto* m = s.model()) {
    out << "model     " << str(m->name()) << " (" << str(m->architecture()) << "), "
        << m->n_layer() << " layers, n_embd " << m->n_embd();
    if (m->n_expert() > 0)
      out << ", " << m->n_expert() << " experts (" << m->n_expert_used() << " used)";
    out << ", weights " << format_bytes(m->total_weight_bytes());
    if (const uint32_t files = files_holding_tensors(s); files > 1)
      out << " in " << files << " files (a split GGUF)";
    out << "\n"
        << "          fingerprint " << schedule.model_fingerprint().hex() << "\n";
  }
  if (const auto* m = s.machine()) {
    char fp[24];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(m->profile_fingerprint()));
    out << "machine   " << str(m->name()) << ": " << str(m->cpu()) << " / "
        << (m->gpu() && m->gpu()->size() ? str(m->gpu()) : "no GPU") << ", VRAM "
        << format_bytes(m->vram_bytes()) << "; profile " << fp << "\n";
  }
  if (const auto* o = s.options())
    out << "options   context " << o->n_ctx() << ", " << o->threads() << " threads, strategy "
        << str(o->strategy()) << ", minimum budget " << format_bytes(o->minimum_budget_bytes())
        << ", pshard " << str(o->pshard_version()) << "\n";
  out << "\nsub-layers (" << s.sublayers()->size() << "):\n";
  for (size_t i = 0; i < s.sublayers()->size(); ++i) {
    const auto* sub = s.sublayers()->Get(static_cast<flatbuffers::uoffset_t>(i));
    char line[160];
    std::snprintf(line, sizeof line, "  %3zu %-10s %2u tensors %12s  kv/token %8llu B\n", i,
                  str(sub->name()).c_str(), sub->tensors() ? sub->tensors()->size() : 0u,
                  format_bytes(sub->weight_bytes()).c_str(),
                  static_cast<unsigned long long>(sub->kv_bytes_per_token()));
    out << line;
  }
  out << "\nplans:\n";
  print_summary(schedule, out);
  out << "\nplacements (R resident, S streamed, C cpu; sub-layer order as above):\n";
  for (size_t b = 0; b < schedule.budgets().size(); ++b)
    for (size_t t = 0; t < schedule.tiers().size(); ++t) {
      const SchedulePlan& p = schedule.plan({b, t});
      out << "  " << format_bytes(p.budget_bytes) << " tier " << p.tier << ": "
          << placement_letters(p) << "  slots " << p.stream_slot_count << " × "
          << format_bytes(p.stream_slot_bytes) << ", prefetch " << p.prefetch_depth << ", "
          << p.vram_layout.size() << " buffers\n";
    }
}

} // namespace pshard
