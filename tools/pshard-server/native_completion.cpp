#include "tools/pshard-server/native_completion.h"

#include "tools/pshard-server/openai_request.h"

#include <algorithm>

namespace pshard::server {

using nlohmann::json;

FieldError native_options_as_completion(const ServingEngine& engine, json& body, int64_t n_prompt,
                                        int64_t fallback) {
  int64_t n_probs = 0;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "n_probs", n_probs, 0, 20));
  body.erase("n_probs");
  if (n_probs > 0)
    body["logprobs"] = n_probs;
  int64_t n_predict = fallback;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "n_predict", n_predict, -1, 1 << 30));
  body.erase("n_predict");
  const int64_t room = std::max<int64_t>(engine.n_ctx() - n_prompt, 0);
  if (!body.contains("max_tokens") || body["max_tokens"].is_null())
    body["max_tokens"] = n_predict < 0 ? room : std::min(n_predict, room);
  return std::nullopt;
}

std::variant<json, ApiError> native_as_completion(const ServingEngine& engine, json body) {
  for (const char* key : {"image_data", "multimodal_data"})
    if (body.contains(key) && !body[key].is_null())
      return bad_request(std::string("'") + key +
                             "' is not taken: send images as image_url parts of a "
                             "/v1/chat/completions message (with --mmproj)",
                         key, "unsupported_parameter");
  if (body.contains("suffix") && !body["suffix"].is_null())
    return bad_request("'suffix' goes with /v1/completions or /infill", "suffix",
                       "unsupported_parameter");
  auto prompt = completion_prompt(body, engine);
  if (auto* e = std::get_if<ApiError>(&prompt))
    return *e;
  const auto& ids = std::get<std::vector<pshard_token>>(prompt);
  const auto n_prompt = static_cast<int64_t>(ids.size());
  body["prompt"] = ids; // tokenized once
  PSHARD_RETURN_IF_FIELD_ERROR(native_options_as_completion(engine, body, n_prompt, -1));
  int64_t n = 1;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "n", n, 1, 1));
  return body;
}

} // namespace pshard::server
