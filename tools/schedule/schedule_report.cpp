// Tables of a schedule artifact. Columns are fixed-width so that the summary lines up in
// a terminal and in CI logs.
#include "tools/schedule/schedule_report.h"

#include "runtime/model/kv_ring.h"

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

std::vector<std::string> resident_set_names(const Schedule& schedule, size_t budget) {
  std::vector<std::vector<sfb::Placement>> seen;
  std::vector<std::string> out;
  for (size_t c = 0; c < schedule.contexts().size(); ++c)
    for (size_t t = 0; t < schedule.tiers().size(); ++t) {
      const SchedulePlan& p = schedule.plan({budget, t, c});
      // A set is which sub-layers stay resident, in this context range (its KV size).
      std::vector<sfb::Placement> key;
      for (auto q : p.placements)
        key.push_back(q == sfb::Placement::GpuResident ? q : sfb::Placement::Cpu);
      key.push_back(static_cast<sfb::Placement>(c)); // ranges never share a set's KV caches
      size_t i = 0;
      while (i < seen.size() && seen[i] != key)
        ++i;
      if (i == seen.size())
        seen.push_back(key);
      out.push_back(i < 26 ? std::string(1, static_cast<char>('A' + i)) : std::to_string(i));
    }
  return out;
}

void print_summary(const Schedule& schedule, std::ostream& out) {
  char line[360];
  const auto* o = schedule.root().options();
  const int64_t parallel = o ? std::max<int64_t>(o->parallel(), 1) : 1;
  out << "resident KV caches (\"KV\") hold each plan's context for " << parallel
      << " sequence(s) (--parallel)";
  if (schedule.kv_ring_positions() > 0 && parallel > 1)
    out << "; sliding-window layers' caches are a pool of " << schedule.kv_ring_positions()
        << " positions, every sequence's last window in pages of " << pshard::kKvPageTokens
        << " (--swa-full: whole caches)";
  else if (schedule.kv_ring_positions() > 0)
    out << "; sliding-window layers' caches are rings of " << schedule.kv_ring_positions()
        << " positions (--swa-full: whole caches)";
  out << "\n";
  out << "expert-level MoE (\"experts\"): blocks placed expert by expert / experts resident / "
         "copied on demand (the others run on the CPU)\n";
  std::snprintf(line, sizeof line, "%-11s %7s %5s  %-9s %5s %5s %5s %12s %11s %11s %4s %22s %10s %14s\n",
                "budget", "context", "tier", "strategy", "res", "str", "cpu", "ms/pass", "tokens/s",
                "VRAM", "set", "switch from decode", "KV", "experts");
  out << line;
  const size_t n_tiers = schedule.tiers().size();
  for (size_t b = 0; b < schedule.budgets().size(); ++b) {
    const std::vector<std::string> sets = resident_set_names(schedule, b);
    for (size_t c = 0; c < schedule.contexts().size(); ++c)
      for (size_t t = 0; t < n_tiers; ++t) {
        const SchedulePlan& p = schedule.plan({b, t, c});
        // What moving from this range's decode plan (the first tier) here copies.
        std::string switch_in = "-";
        if (const ScheduleSwitch* sw = schedule.find_switch(b, {b, 0, c}, {b, t, c}))
          switch_in = format_bytes(sw->upload_bytes) + printf_string(" %.1f ms", sw->predicted_ms);
        uint64_t kv = 0;
        for (const SchedulePlan::Buffer& buf : p.vram_layout)
          kv += buf.kind == sfb::BufferKind::KvCache ? buf.size : 0;
        size_t resident = 0, copied = 0;
        for (const SchedulePlan::Experts& e : p.experts) {
          resident += e.resident.size();
          copied += e.copied.size();
        }
        const std::string experts = p.experts.empty() ? "-"
                                                      : std::to_string(p.experts.size()) + "/" +
                                                            std::to_string(resident) + "/" +
                                                            std::to_string(copied);
        std::snprintf(line, sizeof line,
                      "%-11s %7s %5lld  %-9s %5d %5d %5d %12.3f %11.1f %11s %4s %22s %10s %14s\n",
                      c == 0 && t == 0 ? format_bytes(p.budget_bytes).c_str() : "",
                      t == 0 ? std::to_string(p.context).c_str() : "",
                      static_cast<long long>(p.tier), p.strategy.c_str(),
                      count(p, sfb::Placement::GpuResident), count(p, sfb::Placement::GpuStreamed),
                      count(p, sfb::Placement::Cpu), p.predicted_ms_per_pass,
                      p.predicted_tokens_per_s, format_bytes(p.arena_bytes).c_str(),
                      sets[c * n_tiers + t].c_str(), switch_in.c_str(), format_bytes(kv).c_str(),
                      experts.c_str());
        out << line;
      }
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
  if (const auto* o = s.options()) {
    out << "options   context " << o->n_ctx() << " (ranges";
    for (int64_t c : schedule.contexts())
      out << " " << c;
    out << "), " << o->threads() << " threads, strategy " << str(o->strategy())
        << ", minimum budget " << format_bytes(o->minimum_budget_bytes()) << ", pshard "
        << str(o->pshard_version()) << "\n";
    if (o->workload_prompt_tokens() > 0) {
      const ScheduleLink& l = schedule.link();
      out << "          workload " << o->workload_prompt_tokens() << ":"
          << o->workload_generated_tokens() << ", switches priced at "
          << printf_string("%.2f ms", l.h2d_ms(1ull << 30)) << " per GiB to the GPU\n";
    }
  }
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
    for (size_t c = 0; c < schedule.contexts().size(); ++c)
      for (size_t t = 0; t < schedule.tiers().size(); ++t) {
        const SchedulePlan& p = schedule.plan({b, t, c});
        out << "  " << format_bytes(p.budget_bytes) << " context " << p.context << " tier "
            << p.tier << ": " << placement_letters(p) << "  slots " << p.stream_slot_count
            << " × " << format_bytes(p.stream_slot_bytes) << ", prefetch " << p.prefetch_depth
            << ", " << p.vram_layout.size() << " buffers\n";
      }
  out << "\nswitches (weights up; KV per cached position up / down; predicted at the "
         "workload's positions):\n";
  size_t listed = 0;
  for (size_t b = 0; b < schedule.budgets().size(); ++b)
    for (const ScheduleSwitch& sw : schedule.switches(b)) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "  %-11s context %lld tier %lld -> context %lld tier %lld: %s up, KV %llu / "
                    "%llu B per position, %.3f ms at %lld positions\n",
                    format_bytes(schedule.budgets()[b]).c_str(),
                    static_cast<long long>(schedule.contexts()[sw.from_context]),
                    static_cast<long long>(schedule.tiers()[sw.from_tier]),
                    static_cast<long long>(schedule.contexts()[sw.to_context]),
                    static_cast<long long>(schedule.tiers()[sw.to_tier]),
                    format_bytes(sw.upload_bytes).c_str(),
                    static_cast<unsigned long long>(sw.kv_upload_bytes_per_position),
                    static_cast<unsigned long long>(sw.kv_download_bytes_per_position),
                    sw.predicted_ms, static_cast<long long>(sw.priced_positions));
      out << line;
      if (sw.state_upload_bytes + sw.state_download_bytes > 0)
        out << "              recurrent states: " << format_bytes(sw.state_upload_bytes) << " up, "
            << format_bytes(sw.state_download_bytes) << " down\n";
      ++listed;
    }
  if (listed == 0)
    out << "  none: every tier of a budget keeps the same resident set\n";
  print_vision_tables(schedule, out);
}

} // namespace pshard
