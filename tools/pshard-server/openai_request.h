// OpenAI request bodies (/v1/completions, /v1/chat/completions) read into what the batch
// takes, every mistake an ApiError naming the field: malformed JSON, wrong types, values
// out of range, an unknown model, a prompt longer than the context or max_tokens past it,
// parameters pshard does not implement, image parts that are no image or that the server
// cannot take.
#pragma once

#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/reasoning.h"
#include "tools/pshard-server/sampler_fields.h"
#include "tools/pshard-server/serving_engine.h"
#include "tools/pshard-server/structured_output.h"
#include "tools/pshard-server/tool_calls.h"

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pshard::server {

enum class Endpoint { kCompletions, kChat };

// `n` at most: each choice is a sequence of the batch, run beside the others.
inline constexpr int64_t kMaxChoices = 16;

struct GenerationRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  bool stream = false;
  bool seeded = false;        // the body gave a seed (other than llama-server's -1: a random one)
  bool include_usage = false; // stream_options.include_usage
  std::vector<pshard_token> prompt;
  // A chat with an image part (pshard-server --mmproj): the rendered prompt as text, the
  // image's place in it, and the image; pshard_batch_add tokenizes and encodes them, and
  // `prompt` stays empty.
  std::string prompt_text;
  std::string rendered; // a chat: its prompt as the template renders it (POST /apply-template)
  std::vector<std::shared_ptr<pshard_image>> images;
  int64_t max_tokens = -1; // -1: until the context is full
  int32_t n = 1;           // choices, each its own sequence
  bool logprobs = false;
  int64_t top_logprobs = 0;
  std::vector<std::string> stop;
  int64_t t_max_predict_ms = 0; // pshard_seq_params.t_max_predict_ms; 0: no limit
  bool post_sampling_probs = false; // log-probs after the sampler's stages (pshard_seq_params')
  pshard_generate_params sampling = pshard_generate_default_params(); // n_predict unused
  StructuredOutput output; // response_format, json_schema or grammar
  std::vector<pshard_logit_bias> logit_bias;
  // dry_sequence_breakers and samplers (request_runner points sampling at them).
  SamplerStrings sampler_strings;
  std::optional<ToolUse> tools; // chat with `tools` (and tool_choice not "none")
  ReasoningOptions reasoning;   // chat: how the answer's reasoning is sent, thinking on/off
};

std::variant<GenerationRequest, ApiError>
parse_generation(const std::string& body, Endpoint endpoint, const ServingEngine& engine);

// A completion's `prompt` as tokens: text (tokenized with the model's BOS), ["text"], token
// ids, or with `suffix` the infill prompt; errors name the field.
std::variant<std::vector<pshard_token>, ApiError> completion_prompt(const nlohmann::json& body,
                                                                    const ServingEngine& engine);

// A body's optional "model": absent, or this server's model (else 404 model_not_found).
FieldError read_model(const nlohmann::json& body, const ServingEngine& engine);

// The body as a JSON object, or the error to answer.
std::variant<nlohmann::json, ApiError> parse_object(const std::string& body);
// The same keeping the fields' order (a body translated into another API's, whose
// schemas and tools keep their order in the prompt).
std::variant<nlohmann::ordered_json, ApiError> parse_ordered_object(const std::string& body);
// parse_object, then read_model: a request body for this server's model.
std::variant<nlohmann::json, ApiError> parse_for_model(const std::string& body,
                                                       const ServingEngine& engine);

} // namespace pshard::server
