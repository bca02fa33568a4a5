// pshard-bench's batched mode printed as llama-batched-bench prints it: a header line,
// the table, and then the plans the passes ran (per compiled budget and tier).
#include "tools/common/json_writer.h"
#include "tools/pshard-bench/batched_bench.h"

#include <algorithm>
#include <cstdio>

namespace pshard::bench {

void print_batched_markdown(std::ostream& out, const BatchedReport& r) {
  char line[256];
  std::snprintf(line, sizeof line,
                "\nmain: model = %s, backend = %s, n_kv_max = %lld per sequence, n_batch = %lld, "
                "n_threads = %d, vram_budget = %.1f MiB\n\n",
                r.model.c_str(), r.backend.c_str(), static_cast<long long>(r.n_ctx),
                static_cast<long long>(r.n_batch), r.threads,
                static_cast<double>(r.vram_budget) / (1 << 20));
  out << line;
  const double pool_mib = static_cast<double>(r.kv.total_pages * r.kv_page_bytes +
                                              r.kv.window_total_pages * r.kv_window_page_bytes) /
                          (1 << 20);
  std::snprintf(line, sizeof line, "KV pools: %.1f MiB — %lld pages of %lld positions%s", pool_mib,
                static_cast<long long>(r.kv.total_pages), static_cast<long long>(r.kv.page_tokens),
                r.kv.window_total_pages > 0 ? "" : "\n\n");
  out << line;
  if (r.kv.window_total_pages > 0) {
    std::snprintf(line, sizeof line, ", sliding-window layers %lld pages\n\n",
                  static_cast<long long>(r.kv.window_total_pages));
    out << line;
  }
  out << "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |"
         "    S t/s |\n"
      << "|-------|--------|------|--------|----------|----------|----------|----------|----------|"
         "----------|\n";
  for (const BatchedRow& row : r.rows) {
    std::snprintf(
        line, sizeof line,
        "| %5lld | %6lld | %4lld | %6lld | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |\n",
        static_cast<long long>(row.pp), static_cast<long long>(row.tg),
        static_cast<long long>(row.pl), static_cast<long long>(row.n_kv()), row.t_pp,
        row.speed_pp(), row.t_tg, row.speed_tg(), row.t_pp + row.t_tg, row.speed());
    out << line;
  }
  const auto& plans = r.engine.sessions.plans;
  if (std::none_of(plans.begin(), plans.end(), [](const PlanUse& u) { return u.tier > 0; }))
    return; // no schedule: no plans to tell apart
  out << "\n";
  for (const PlanUse& u : r.engine.sessions.plans) {
    if (u.passes <= 0)
      continue;
    std::snprintf(line, sizeof line,
                  "plan: budget %9.1f MiB tier %4lld %-9s %7lld passes, %8lld tokens, measured "
                  "%8.3f ms per pass (predicted %8.3f)\n",
                  static_cast<double>(u.budget_bytes) / (1 << 20), static_cast<long long>(u.tier),
                  u.strategy.c_str(), static_cast<long long>(u.passes),
                  static_cast<long long>(u.tokens), u.measured_ms_per_pass(),
                  u.predicted_ms_per_pass);
    out << line;
  }
}

void print_batched_jsonl(std::ostream& out, const BatchedReport& r) {
  for (const BatchedRow& row : r.rows) {
    JsonWriter j(out, /*pretty=*/false);
    j.begin_object();
    j.key("model").value(r.model);
    j.key("backend").value(r.backend);
    j.key("n_kv_max").value(r.n_ctx);
    j.key("n_batch").value(r.n_batch);
    j.key("n_threads").value(static_cast<int64_t>(r.threads));
    j.key("vram_budget").value(r.vram_budget);
    j.key("pp").value(row.pp);
    j.key("tg").value(row.tg);
    j.key("pl").value(row.pl);
    j.key("n_kv").value(row.n_kv());
    j.key("t_pp").value(row.t_pp);
    j.key("speed_pp").value(row.speed_pp());
    j.key("t_tg").value(row.t_tg);
    j.key("speed_tg").value(row.speed_tg());
    j.key("t").value(row.t_pp + row.t_tg);
    j.key("speed").value(row.speed());
    j.end_object();
    out << "\n";
  }
}

} // namespace pshard::bench
