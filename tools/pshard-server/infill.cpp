#include "tools/pshard-server/infill.h"

#include "tools/pshard-server/native_completion.h"
#include "tools/pshard-server/openai_response.h"

#include <algorithm>

namespace pshard::server {

using nlohmann::json;

FieldError read_infill(const json& body, InfillInput& out) {
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "input_prefix", out.prefix));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "input_suffix", out.suffix));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "prompt", out.prompt));
  auto it = body.find("input_extra");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  if (!it->is_array())
    return bad_request("'input_extra' must be an array of {\"filename\", \"text\"} objects",
                       "input_extra", "invalid_type");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& chunk = (*it)[i];
    const std::string param = "input_extra[" + std::to_string(i) + "]";
    if (!chunk.is_object() || !chunk.contains("text") || !chunk["text"].is_string() ||
        (chunk.contains("filename") && !chunk["filename"].is_string()))
      return bad_request("'" + param + "' must be {\"filename\": string, \"text\": string}", param,
                         "invalid_type");
    out.extra.emplace_back(chunk.value("filename", ""), chunk["text"].get<std::string>());
  }
  return std::nullopt;
}

std::variant<std::vector<pshard_token>, ApiError>
infill_prompt(const ServingEngine& engine, const InfillInput& in, const std::string& param) {
  const pshard_fim_tokens& fim = engine.fim();
  if (fim.prefix < 0 || fim.suffix < 0 || fim.middle < 0)
    return bad_request("'" + param +
                           "' asks to fill in the middle, but this model has no "
                           "fill-in-the-middle tokens (prefix, suffix, middle); use a code model "
                           "trained for it (Qwen2.5-Coder, StarCoder2, CodeLlama, DeepSeek-Coder, "
                           "Codestral)",
                       param, "fim_unsupported");
  std::vector<pshard_token> out;
  Status failed = Status::ok_status();
  auto text = [&](const std::string& s) {
    if (s.empty() || !failed.ok())
      return;
    auto ids = engine.tokenize(s, /*add_special=*/false, /*parse_special=*/false);
    if (!ids.ok()) {
      failed = ids.status();
      return;
    }
    out.insert(out.end(), ids->begin(), ids->end());
  };
  auto bos = engine.tokenize("", /*add_special=*/true); // [BOS] where the model adds one
  if (bos.ok())
    out.insert(out.end(), bos->begin(), bos->end());
  if (fim.repo >= 0 && fim.file_sep >= 0) {
    out.push_back(fim.repo);
    text("myproject\n");
    for (const auto& [filename, content] : in.extra) {
      out.push_back(fim.file_sep);
      text(filename + "\n" + content);
    }
    out.push_back(fim.file_sep);
    text("filename\n");
  } else {
    for (const auto& chunk : in.extra)
      text(chunk.second);
  }
  out.push_back(fim.prefix);
  text(in.prefix);
  out.push_back(fim.suffix);
  text(in.suffix);
  out.push_back(fim.middle);
  text(in.prompt);
  if (!failed.ok())
    return bad_request(failed.message(), param);
  return out;
}

std::variant<json, ApiError> infill_as_completion(const ServingEngine& engine, json body) {
  InfillInput in;
  PSHARD_RETURN_IF_FIELD_ERROR(read_infill(body, in));
  auto prompt = infill_prompt(engine, in, "input_prefix");
  if (auto* e = std::get_if<ApiError>(&prompt))
    return *e;
  for (const char* key : {"input_prefix", "input_suffix", "input_extra"})
    body.erase(key);
  const auto n_prompt = static_cast<int64_t>(std::get<std::vector<pshard_token>>(prompt).size());
  body["prompt"] = std::move(std::get<std::vector<pshard_token>>(prompt));
  PSHARD_RETURN_IF_FIELD_ERROR(
      native_options_as_completion(engine, body, n_prompt, kInfillMaxTokens));
  int64_t n = 1;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "n", n, 1, 1));
  return body;
}

} // namespace pshard::server
