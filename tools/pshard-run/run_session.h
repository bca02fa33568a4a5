// pshard-run's use of the C API (pshard.h): load, create a context, tokenize, generate,
// collect what the report prints. RAII holders for the handles.
#pragma once

#include "pshard/pshard.h"
#include "runtime/core/status.h"
#include "tools/common/capi_call.h"
#include "tools/pshard-run/run_options.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pshard {

struct PlanLine {
  pshard_plan_stats stats;
  std::string strategy;
};

struct RunResult {
  ModelHandle model;
  ModelHandle draft_model; // -md; freed after the context that drafts with it
  ContextHandle context;
  std::vector<pshard_token> prompt;
  std::vector<pshard_token> generated;
  std::string text; // the generated tokens detokenized
  std::vector<std::vector<std::pair<pshard_token, float>>> top_logprobs;
  pshard_generate_result timings = pshard_generate_result_init();
  pshard_stats stats = pshard_stats_init();
  std::vector<PlanLine> plans;
  uint64_t seed = 0;
  int32_t draft_max = 0; // --draft-max: the report says how speculation went
  std::string backend; // as resolved
};

// Streams text to stdout as it comes unless o.json. Fails with pshard_last_error().
Result<RunResult> run_generation(const RunOptions& o, const std::string& prompt_text);

// The model loaded and a context created as the options say (r.model, r.context,
// r.backend, r.seed set); what run_generation and the conversation share.
Result<RunResult> start_session(const RunOptions& o);
pshard_generate_params generate_params(const RunOptions& o, uint64_t seed);

} // namespace pshard
