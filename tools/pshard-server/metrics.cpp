#include "tools/pshard-server/metrics.h"

#include <sstream>

namespace pshard::server {
namespace {

class Writer {
public:
  // One metric family: its help line, type and samples.
  Writer& family(const char* name, const char* type, const char* help) {
    out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
    return *this;
  }
  template <typename T> Writer& sample(const char* name, T value, const std::string& labels = "") {
    out_ << name;
    if (!labels.empty())
      out_ << "{" << labels << "}";
    out_ << " " << value << "\n";
    return *this;
  }
  template <typename T>
  Writer& metric(const char* name, const char* type, const char* help, T value) {
    return family(name, type, help).sample(name, value);
  }
  std::string str() const { return out_.str(); }

private:
  std::ostringstream out_;
};

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    out += c == '\n' ? 'n' : c;
  }
  return out;
}

} // namespace

void HttpCounters::count(const std::string& route, int status) {
  std::lock_guard lock(mutex_);
  ++counts_[{route, status}];
}

std::map<std::pair<std::string, int>, int64_t> HttpCounters::snapshot() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::string prometheus_metrics(ServingEngine& engine, const HttpCounters& http) {
  pshard_batch_stats st = pshard_batch_stats_init();
  (void)pshard_batch_get_stats(engine.batch(), &st);
  Writer w;
  w.family("pshard_requests_total", "counter", "Generation requests that ended, by finish reason.")
      .sample("pshard_requests_total", st.finished_stop, "finish=\"stop\"")
      .sample("pshard_requests_total", st.finished_length, "finish=\"length\"")
      .sample("pshard_requests_total", st.finished_cancelled, "finish=\"cancelled\"")
      .sample("pshard_requests_total", st.finished_error, "finish=\"error\"");
  w.metric("pshard_requests_added_total", "counter", "Generation requests accepted into the batch.",
           st.requests_added);
  w.metric("pshard_requests_refused_total", "counter",
           "Generation requests the batch refused (full queue, invalid).", st.requests_refused);
  w.metric("pshard_requests_queued", "gauge", "Requests waiting for a sequence slot.", st.queued);
  w.metric("pshard_requests_running", "gauge", "Requests holding a sequence.", st.running);
  w.metric("pshard_prompt_tokens_total", "counter", "Prompt tokens decoded.", st.prompt_tokens);
  w.metric("pshard_generated_tokens_total", "counter", "Tokens generated.", st.generated_tokens);
  w.metric("pshard_prompt_tokens_per_second", "gauge",
           "Prompt tokens decoded per second over the last 10 s.", st.prompt_tokens_per_s);
  w.metric("pshard_generated_tokens_per_second", "gauge",
           "Tokens generated per second over the last 10 s.", st.generated_tokens_per_s);
  w.metric("pshard_passes_total", "counter", "Batched forward passes.", st.passes);
  w.metric("pshard_busy_seconds_total", "counter", "Time spent in forward passes.",
           st.busy_ms / 1e3);
  w.metric("pshard_kv_page_tokens", "gauge", "Positions in one KV cache page.", st.kv_page_tokens);
  w.metric("pshard_kv_pages_total", "gauge", "KV cache pages.", st.kv_pages_total);
  w.metric("pshard_kv_pages_used", "gauge", "KV cache pages in use.", st.kv_pages_used);
  w.metric("pshard_kv_pages_cached", "gauge",
           "KV cache pages the prefix cache holds (idle ones count as free).", st.kv_pages_cached);
  w.metric("pshard_kv_window_pages_total", "gauge",
           "KV cache pages of the sliding-window layers' own pool (0: none).",
           st.kv_window_pages_total);
  w.metric("pshard_kv_window_pages_used", "gauge",
           "Sliding-window KV pages in use (each sequence: its last window's).",
           st.kv_window_pages_used);
  w.metric("pshard_prompt_tokens_cached_total", "counter",
           "Prompt tokens read from the prefix cache instead of decoded.", st.cached_prompt_tokens);
  w.metric("pshard_images_encoded_total", "counter", "Request images encoded (--mmproj).",
           st.images_encoded);
  w.metric("pshard_images_reused_total", "counter",
           "Request images found among the recently encoded ones and not encoded again.",
           st.images_reused);
  w.metric("pshard_draft_tokens_total", "counter",
           "Drafted tokens checked by speculative decoding (--draft-max).", st.draft_tokens);
  w.metric("pshard_draft_tokens_accepted_total", "counter", "Drafted tokens sampled as drafted.",
           st.accepted_draft_tokens);
  w.metric("pshard_draft_passes_total", "counter",
           "Passes of the draft model (--model-draft), drafting for every request at once.",
           st.draft_passes);
  w.metric("pshard_vram_budget_bytes", "gauge", "The VRAM budget in force.", st.vram_budget);
  w.metric("pshard_vram_used_bytes", "gauge", "Device memory held now.", st.vram_bytes);
  w.metric("pshard_vram_peak_bytes", "gauge", "The largest device arena held.", st.peak_vram_bytes);
  w.metric("pshard_bytes_streamed_total", "counter", "Weight bytes streamed to the device.",
           st.bytes_streamed);

  w.family("pshard_plan_passes_total", "counter", "Passes per plan (compiled budget, tier).");
  std::ostringstream tokens, experts;
  for (size_t i = 0; i < st.n_plans; ++i) {
    pshard_plan_stats p = pshard_plan_stats_init();
    if (pshard_batch_get_plan_stats(engine.batch(), i, &p) != PSHARD_OK)
      break;
    const std::string labels = "budget_bytes=\"" + std::to_string(p.budget_bytes) + "\",tier=\"" +
                               std::to_string(p.tier) + "\",strategy=\"" +
                               label_value(p.strategy ? p.strategy : "") + "\"";
    w.sample("pshard_plan_passes_total", p.passes, labels);
    tokens << "pshard_plan_tokens_total{" << labels << "} " << p.tokens << "\n";
    if (p.experts_resident + p.experts_copied + p.experts_host > 0) // expert-level blocks ran
      for (const auto& [where, n] :
           {std::pair{"resident", p.experts_resident}, std::pair{"copied", p.experts_copied},
            std::pair{"host", p.experts_host}})
        experts << "pshard_plan_experts_total{" << labels << ",where=\"" << where << "\"} " << n
                << "\n";
  }
  std::string out = w.str();
  out += "# HELP pshard_plan_tokens_total Tokens per plan (compiled budget, tier).\n"
         "# TYPE pshard_plan_tokens_total counter\n" +
         tokens.str();
  out += "# HELP pshard_plan_experts_total Routed experts of expert-level MoE blocks per plan, by "
         "where they ran (resident, copied, host).\n"
         "# TYPE pshard_plan_experts_total counter\n" +
         experts.str();
  Writer h;
  h.family("pshard_http_responses_total", "counter", "HTTP responses by route and status.");
  for (const auto& [key, n] : http.snapshot())
    h.sample("pshard_http_responses_total", n,
             "route=\"" + label_value(key.first) + "\",status=\"" + std::to_string(key.second) +
                 "\"");
  return out + h.str();
}

} // namespace pshard::server
