// Code infill: OpenAI completions' `suffix`, and llama-server's POST /infill (what editor
// plugins such as llama.vscode call), as the model's fill-in-the-middle prompt
// (pshard_model_fim_tokens). With repository markers (Qwen2.5-Coder):
//
//   [BOS] [repo]myproject\n ([file_sep]FILENAME\nTEXT)* [file_sep]filename\n
//         [prefix]BEFORE[suffix]AFTER[middle]PROMPT
//
// without them the extra files' texts simply come first. The user's text is tokenized
// with control tokens left as text (code may spell "<|fim_prefix|>").
#pragma once

#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/request_runner.h"
#include "tools/pshard-server/serving_engine.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pshard::server {

struct InfillInput {
  std::string prefix, suffix;
  std::string prompt; // after the middle marker: the start of the answer (the cursor's line)
  std::vector<std::pair<std::string, std::string>> extra; // (filename, text) of other files
};

// /infill's input_prefix, input_suffix, input_extra and prompt; errors name the field.
FieldError read_infill(const nlohmann::json& body, InfillInput& out);

// The prompt's tokens; a model without the three markers is a 400 that says so (`param`
// names the field that asked for infill).
std::variant<std::vector<pshard_token>, ApiError>
infill_prompt(const ServingEngine& engine, const InfillInput& in, const std::string& param);

// /infill's body as a /v1/completions body: the infill prompt's tokens as `prompt`,
// llama-server's `n_predict` as `max_tokens` (default kInfillMaxTokens, -1 unlimited, at
// most what the context has room for), the input_* fields gone.
std::variant<nlohmann::json, ApiError> infill_as_completion(const ServingEngine& engine,
                                                            nlohmann::json body);
inline constexpr int64_t kInfillMaxTokens = 256;

} // namespace pshard::server
