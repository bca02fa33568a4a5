#include "tools/pshard-run/run_report.h"

#include "runtime/core/process_memory.h"
#include "runtime/executor/session_stats.h"
#include "tools/common/json_writer.h"

#include <algorithm>
#include <cstdio>

namespace pshard {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

double per_second(int64_t n, double ms) { return ms > 0 ? static_cast<double>(n) * 1e3 / ms : 0; }

// The first token comes out of the prompt pass; later ones each cost a decode step.
double generation_per_second(const pshard_generate_result& t) {
  return t.generation_ms > 0 && t.n_generated > 1 ? (t.n_generated - 1) * 1e3 / t.generation_ms : 0;
}

void write_plans(std::ostream& err, const RunResult& r) {
  char line[320];
  std::snprintf(line, sizeof line,
                "device:      %s, budget %.1f MiB, peak VRAM %.1f MiB, %.1f MiB streamed, "
                "%lld budget switches\n",
                r.backend.c_str(), mib(r.stats.vram_budget), mib(r.stats.peak_vram_bytes),
                mib(r.stats.bytes_streamed), static_cast<long long>(r.stats.budget_switches));
  err << line;
  std::snprintf(line, sizeof line,
                "switches:    %lld tier or context switches; %.1f MiB moved by all switches in "
                "%.3f ms (predicted %.3f ms)\n",
                static_cast<long long>(r.stats.plan_switches), mib(r.stats.bytes_switched),
                r.stats.switch_ms, r.stats.switch_predicted_ms);
  err << line;
  std::snprintf(line, sizeof line, "graphs:      %lld of %lld passes replayed as device graphs\n",
                static_cast<long long>(r.stats.graph_passes),
                static_cast<long long>(r.stats.passes));
  err << line;
  // Each plan with the prediction for the contexts its passes ran at.
  for (const PlanLine& p : r.plans) {
    std::snprintf(line, sizeof line,
                  "plan:        budget %9.1f MiB context %6lld tier %4lld %-9s %5lld passes, "
                  "predicted %8.3f ms, measured %8.3f ms per pass\n",
                  mib(p.stats.budget_bytes), static_cast<long long>(p.stats.context),
                  static_cast<long long>(p.stats.tier), p.strategy.c_str(),
                  static_cast<long long>(p.stats.passes), p.stats.predicted_ms_per_pass,
                  p.stats.measured_ms_per_pass);
    err << line;
    const std::string experts = describe_expert_uses(
        {p.stats.experts_resident, p.stats.experts_copied, p.stats.experts_host},
        p.stats.predicted_experts_host, p.stats.passes);
    if (!experts.empty())
      err << "             " << experts << "\n";
  }
}

} // namespace

void write_text_report(std::ostream& out, std::ostream& err, const RunResult& r) {
  const pshard_generate_result& t = r.timings;
  out << "\n" << std::flush;
  char line[256];
  std::snprintf(line, sizeof line, "prompt:      %6lld tokens in %9.2f ms (%8.2f tokens/s)\n",
                static_cast<long long>(t.n_prompt), t.prompt_ms,
                per_second(t.n_prompt, t.prompt_ms));
  err << line;
  std::snprintf(line, sizeof line, "generation:  %6lld tokens in %9.2f ms (%8.2f tokens/s)\n",
                static_cast<long long>(t.n_generated), t.generation_ms, generation_per_second(t));
  err << line;
  std::snprintf(line, sizeof line, "first token: %9.2f ms after the start\n", t.first_token_ms);
  err << line;
  if (t.n_drafted > 0 || r.draft_max > 0) {
    std::snprintf(line, sizeof line,
                  "speculation: %lld of %lld drafted tokens accepted (%.1f%%); %lld decode "
                  "passes for %lld tokens (%.2f a pass)\n",
                  static_cast<long long>(t.n_accepted), static_cast<long long>(t.n_drafted),
                  t.n_drafted > 0 ? 100.0 * double(t.n_accepted) / double(t.n_drafted) : 0.0,
                  static_cast<long long>(t.n_decode_passes),
                  static_cast<long long>(std::max<int64_t>(t.n_generated - 1, 0)),
                  t.n_decode_passes > 0 ? double(t.n_generated - 1) / double(t.n_decode_passes)
                                        : 0.0);
    err << line;
  }
  std::snprintf(line, sizeof line,
                "memory:      peak resident %.1f MiB (model file %.1f MiB mapped, KV cache + "
                "activations %.1f MiB allocated), %d threads, seed %llu\n",
                mib(peak_resident_bytes()), mib(pshard_model_file_bytes(r.model.get())),
                mib(pshard_context_host_bytes(r.context.get())),
                pshard_context_n_threads(r.context.get()), static_cast<unsigned long long>(r.seed));
  err << line;
  if (pshard_model_has_schedule(r.model.get()))
    write_plans(err, r);
}

void write_generation_json(JsonWriter& j, const std::vector<pshard_token>& prompt,
                           const std::vector<pshard_token>& generated, const std::string& text,
                           const std::vector<std::vector<std::pair<pshard_token, float>>>& top) {
  j.key("prompt_tokens").begin_array(/*inline_items=*/true);
  for (pshard_token id : prompt)
    j.value(id);
  j.end_array();
  j.key("generated_tokens").begin_array(/*inline_items=*/true);
  for (pshard_token id : generated)
    j.value(id);
  j.end_array();
  j.key("text").value(text);
  if (!top.empty()) {
    j.key("top_logprobs").begin_array();
    for (const auto& position : top) {
      j.begin_array();
      for (const auto& [id, lp] : position)
        j.begin_object().key("id").value(id).key("logprob").value(lp).end_object();
      j.end_array();
    }
    j.end_array();
  }
}

void write_json_report(std::ostream& out, const RunResult& r) {
  JsonWriter j(out);
  j.begin_object();
  write_generation_json(j, r.prompt, r.generated, r.text, r.top_logprobs);
  const pshard_generate_result& t = r.timings;
  j.key("timings").begin_object();
  j.key("prompt_n").value(t.n_prompt);
  j.key("prompt_ms").value(t.prompt_ms);
  j.key("prompt_per_second").value(per_second(t.n_prompt, t.prompt_ms));
  j.key("predicted_n").value(t.n_generated);
  j.key("predicted_ms").value(t.generation_ms);
  j.key("predicted_per_second").value(generation_per_second(t));
  j.key("time_to_first_token_ms").value(t.first_token_ms);
  j.key("decode_passes").value(t.n_decode_passes);
  j.key("draft_n").value(t.n_drafted);
  j.key("draft_accepted_n").value(t.n_accepted);
  j.end_object();
  j.key("memory").begin_object();
  j.key("peak_resident_bytes").value(peak_resident_bytes());
  j.key("model_file_bytes").value(pshard_model_file_bytes(r.model.get()));
  j.key("allocated_bytes").value(pshard_context_host_bytes(r.context.get()));
  j.end_object();
  j.key("stats").begin_object();
  j.key("backend").value(r.backend);
  j.key("schedule").value(pshard_model_has_schedule(r.model.get()));
  j.key("vram_budget_bytes").value(r.stats.vram_budget);
  j.key("peak_vram_bytes").value(r.stats.peak_vram_bytes);
  j.key("bytes_streamed").value(r.stats.bytes_streamed);
  j.key("bytes_crossed").value(r.stats.bytes_crossed);
  j.key("budget_switches").value(r.stats.budget_switches);
  j.key("plan_switches").value(r.stats.plan_switches);
  j.key("bytes_switched").value(r.stats.bytes_switched);
  j.key("switch_ms").value(r.stats.switch_ms);
  j.key("switch_predicted_ms").value(r.stats.switch_predicted_ms);
  j.key("passes").value(r.stats.passes);
  j.key("graph_passes").value(r.stats.graph_passes);
  j.key("plans").begin_array();
  for (const PlanLine& p : r.plans) {
    j.begin_object();
    j.key("budget_bytes").value(p.stats.budget_bytes);
    j.key("tier").value(p.stats.tier);
    j.key("context").value(p.stats.context);
    j.key("strategy").value(p.strategy);
    j.key("passes").value(p.stats.passes);
    j.key("tokens").value(p.stats.tokens);
    j.key("predicted_ms_per_pass").value(p.stats.predicted_ms_per_pass);
    j.key("measured_ms_per_pass").value(p.stats.measured_ms_per_pass);
    j.key("bytes_streamed").value(p.stats.bytes_streamed);
    j.key("experts_resident").value(p.stats.experts_resident);
    j.key("experts_copied").value(p.stats.experts_copied);
    j.key("experts_host").value(p.stats.experts_host);
    j.key("predicted_experts_host").value(p.stats.predicted_experts_host);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.key("n_threads").value(static_cast<int64_t>(pshard_context_n_threads(r.context.get())));
  j.key("seed").value(r.seed);
  j.end_object();
}

} // namespace pshard
