// llama-server's POST /completion (its own API, which SillyTavern, KoboldAI Lite and
// llama.cpp's older clients call): the body — `prompt` as text or token ids, `n_predict`,
// `stream`, `stop` and llama.cpp's sampler fields under their names — as a /v1/completions
// body, answered in llama-server's form (native_answer.h).
#pragma once

#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/serving_engine.h"

#include <nlohmann/json.hpp>
#include <variant>

namespace pshard::server {

std::variant<nlohmann::json, ApiError> native_as_completion(const ServingEngine& engine,
                                                            nlohmann::json body);

// llama-server's `n_predict` (absent: `fallback`; -1: until the context is full) as the
// completion's `max_tokens`, at most what the context has room for after `n_prompt`
// tokens, as llama-server takes it (an explicit `max_tokens` wins), and `n_probs` (the N
// most likely tokens of each position, at most 20) as its `logprobs`. Shared with /infill.
FieldError native_options_as_completion(const ServingEngine& engine, nlohmann::json& body,
                                        int64_t n_prompt, int64_t fallback);

} // namespace pshard::server
