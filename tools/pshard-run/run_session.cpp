#include "tools/pshard-run/run_session.h"

#include "runtime/capi/sampler_params_c.h"
#include "tools/common/cli_kv_options.h"
#include "tools/common/model_load.h"
#include "tools/common/size_parse.h"
#include "tools/pshard-run/prompt_cache.h"

#include <algorithm>
#include <iostream>
#include <random>
#include <sstream>

namespace pshard {
namespace {

struct Collector {
  RunResult* r;
  bool stream;
};

bool on_token(const pshard_token_event* e, void* user) {
  auto* c = static_cast<Collector*>(user);
  if (e->token >= 0) {
    c->r->generated.push_back(e->token);
    if (e->n_top > 0) {
      std::vector<std::pair<pshard_token, float>> top;
      for (int32_t i = 0; i < e->n_top; ++i)
        top.emplace_back(e->top_ids[i], e->top_logprobs[i]);
      c->r->top_logprobs.push_back(std::move(top));
    }
  }
  if (c->stream)
    std::cout.write(e->text, static_cast<std::streamsize>(e->text_len)).flush();
  return true;
}

} // namespace

Result<RunResult> start_session(const RunOptions& o) {
  PSHARD_ASSIGN_OR_RETURN(uint64_t n_ctx, parse_size(o.ctx_size));
  uint64_t vram = 0;
  if (!o.vram.empty()) {
    PSHARD_ASSIGN_OR_RETURN(vram, parse_size(o.vram));
  }
  RunResult r;
  PSHARD_ASSIGN_OR_RETURN(r.model, cli::load_model(o));
  pshard_model* model = r.model.get();
  std::istringstream warnings(pshard_model_load_warnings(model)); // e.g. an unknown pre-tokenizer
  for (std::string line; std::getline(warnings, line);)
    std::cerr << "pshard-run: warning: " << line << "\n";

  PSHARD_ASSIGN_OR_RETURN(pshard_backend backend,
                          parse_backend(o.backend, pshard_model_has_schedule(model)));
  r.backend = backend_name(backend);
  pshard_context_params cp = pshard_context_default_params();
  cp.backend = backend;
  cp.n_threads = o.n_threads;
  cp.n_ctx = static_cast<int64_t>(n_ctx);
  cp.n_batch = o.n_batch;
  if (o.vram.empty()) { // default: the largest compiled budget
    size_t n = 0;
    PSHARD_C_CALL(pshard_model_schedule_budgets(model, nullptr, 0, &n));
    std::vector<uint64_t> budgets(n);
    PSHARD_C_CALL(pshard_model_schedule_budgets(model, budgets.data(), n, &n));
    vram = n > 0 ? budgets.back() : 0;
  }
  cp.vram_budget = vram;
  cp.emu_pcie_gbps = o.emu_pcie_gbps;
  cp.trace = !o.trace_path.empty();
  cp.draft_max = o.draft_max;
  cp.swa_full = o.swa_full;
  cp.kv_type_k = cli::kv_type_param<pshard_kv_type>(o.cache_type_k); // -ctk / -ctv
  cp.kv_type_v = cli::kv_type_param<pshard_kv_type>(o.cache_type_v);
  if (!o.draft_model_path.empty()) {
    PSHARD_ASSIGN_OR_RETURN(r.draft_model, cli::load_draft_model(o.draft_model_path, o.no_mmap));
    cp.draft_model = r.draft_model.get();
    cp.draft_p_min = o.draft_p_min;
  }
  pshard_context* ctx = nullptr;
  PSHARD_C_CALL(pshard_context_create(model, &cp, &ctx));
  r.context.reset(ctx);
  r.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  r.draft_max = o.draft_max;
  return r;
}

pshard_generate_params generate_params(const RunOptions& o, uint64_t seed) {
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  sampler_to_c(o.sampling, gp);
  gp.seed = seed;
  gp.top_logprobs = o.top_logprobs;
  gp.draft_max = o.draft_max;
  gp.lookup_ngram_min = o.lookup_ngram_min;
  gp.lookup_ngram_max = o.lookup_ngram_max;
  gp.lookup_adaptive = !o.draft_fixed;
  if (o.dry_breakers) { // non-null, even when empty: "none" given
    gp.dry_sequence_breakers = o.dry_breaker_cstrs.data();
    gp.n_dry_sequence_breakers = o.dry_breaker_cstrs.size();
  }
  if (o.sampler_names)
    gp.samplers = o.sampler_names->c_str();
  gp.logit_bias = o.logit_bias.data();
  gp.n_logit_bias = o.logit_bias.size();
  gp.grammar = o.grammar.empty() ? nullptr : o.grammar.c_str();
  gp.json_schema = o.json_schema.empty() ? nullptr : o.json_schema.c_str();
  return gp;
}

Result<RunResult> run_generation(const RunOptions& o, const std::string& prompt_text) {
  PSHARD_ASSIGN_OR_RETURN(RunResult r, start_session(o));
  pshard_model* model = r.model.get();
  pshard_context* ctx = r.context.get();
  pshard_tokenize_params tp = pshard_tokenize_default_params();
  tp.parse_special = o.parse_special;
  PSHARD_ASSIGN_OR_RETURN(r.prompt, tokenize_text(model, prompt_text, tp));

  pshard_generate_params gp = generate_params(o, r.seed);
  size_t held = 0; // prompt tokens the context holds already (--prompt-cache)
  if (!o.prompt_cache.empty()) {
    PSHARD_ASSIGN_OR_RETURN(held, use_prompt_cache(ctx, r.prompt, o, std::cerr));
    gp.held = r.prompt.data();
    gp.n_held = held;
  }
  if (!o.json)
    std::cout << prompt_text << std::flush;
  Collector collector{&r, !o.json};
  PSHARD_C_CALL(pshard_context_generate(ctx, r.prompt.data() + held, r.prompt.size() - held, &gp,
                                        on_token, &collector, &r.timings));
  if (o.prompt_cache_all)
    PSHARD_RETURN_IF_ERROR(save_prompt_cache_all(ctx, r.prompt, r.generated, o));

  size_t len = 0;
  PSHARD_C_CALL(
      pshard_model_detokenize(model, r.generated.data(), r.generated.size(), nullptr, 0, &len));
  r.text.resize(len);
  PSHARD_C_CALL(pshard_model_detokenize(model, r.generated.data(), r.generated.size(),
                                        r.text.data(), len, &len));
  PSHARD_C_CALL(pshard_context_get_stats(ctx, &r.stats));
  for (size_t i = 0; i < r.stats.n_plans; ++i) {
    PlanLine line{pshard_plan_stats_init(), ""};
    PSHARD_C_CALL(pshard_context_get_plan_stats(ctx, i, &line.stats));
    line.strategy = line.stats.strategy ? line.stats.strategy : "";
    line.stats.strategy = nullptr;
    r.plans.push_back(std::move(line));
  }
  if (!o.trace_path.empty())
    PSHARD_C_CALL(pshard_context_write_trace(ctx, o.trace_path.c_str()));
  return r;
}

} // namespace pshard
