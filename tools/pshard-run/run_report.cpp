#include "tools/pshard-run/run_report.h"

#include "runtime/core/process_memory.h"
#include "tools/common/json_writer.h"

#include <cstdio>

namespace pshard {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

} // namespace

void write_text_report(std::ostream& out, std::ostream& err, const RunReport& r) {
  const GenerateTimings& t = r.result.timings;
  out << "\n" << std::flush;
  char line[256];
  std::snprintf(line, sizeof line, "prompt:      %6lld tokens in %9.2f ms (%8.2f tokens/s)\n",
                static_cast<long long>(t.n_prompt), t.prompt_ms, t.prompt_tokens_per_s());
  err << line;
  std::snprintf(line, sizeof line, "generation:  %6lld tokens in %9.2f ms (%8.2f tokens/s)\n",
                static_cast<long long>(t.n_generated), t.generation_ms,
                t.generation_tokens_per_s());
  err << line;
  std::snprintf(line, sizeof line, "first token: %9.2f ms after the start\n", t.first_token_ms);
  err << line;
  std::snprintf(line, sizeof line,
                "memory:      peak resident %.1f MiB (model file %.1f MiB mapped, KV cache + "
                "activations %.1f MiB allocated), %d threads, seed %llu\n",
                mib(peak_resident_bytes()), mib(r.model.file().file_size()),
                mib(r.session.allocated_bytes()), r.session.n_threads(),
                static_cast<unsigned long long>(r.seed));
  err << line;
}

void write_json_report(std::ostream& out, const RunReport& r) {
  const GenerateResult& g = r.result;
  JsonWriter j(out);
  j.begin_object();
  j.key("prompt_tokens").begin_array(/*inline_items=*/true);
  for (TokenId id : g.prompt)
    j.value(id);
  j.end_array();
  j.key("generated_tokens").begin_array(/*inline_items=*/true);
  for (TokenId id : g.generated)
    j.value(id);
  j.end_array();
  j.key("text").value(g.text);
  if (!g.top_logprobs.empty()) {
    j.key("top_logprobs").begin_array();
    for (const auto& position : g.top_logprobs) {
      j.begin_array();
      for (const TokenLogprob& lp : position)
        j.begin_object().key("id").value(lp.id).key("logprob").value(lp.logprob).end_object();
      j.end_array();
    }
    j.end_array();
  }
  const GenerateTimings& t = g.timings;
  j.key("timings").begin_object();
  j.key("prompt_n").value(t.n_prompt);
  j.key("prompt_ms").value(t.prompt_ms);
  j.key("prompt_per_second").value(t.prompt_tokens_per_s());
  j.key("predicted_n").value(t.n_generated);
  j.key("predicted_ms").value(t.generation_ms);
  j.key("predicted_per_second").value(t.generation_tokens_per_s());
  j.key("time_to_first_token_ms").value(t.first_token_ms);
  j.end_object();
  j.key("memory").begin_object();
  j.key("peak_resident_bytes").value(peak_resident_bytes());
  j.key("model_file_bytes").value(r.model.file().file_size());
  j.key("allocated_bytes").value(static_cast<uint64_t>(r.session.allocated_bytes()));
  j.end_object();
  j.key("n_threads").value(static_cast<int64_t>(r.session.n_threads()));
  j.key("seed").value(r.seed);
  j.end_object();
}

} // namespace pshard
