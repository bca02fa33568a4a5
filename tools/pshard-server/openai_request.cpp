#include "tools/pshard-server/openai_request.h"

#include "tools/pshard-server/image_part.h"
#include "tools/pshard-server/infill.h"
#include "tools/pshard-server/sampler_fields.h"
#include "tools/pshard-server/structured_output.h"
#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/tool_calls.h"

#include <cstdlib>
#include <limits>

namespace pshard::server {
namespace {

using nlohmann::json;

// A message's content: a string, or OpenAI's array of text and image parts; an image part
// becomes its place in the text (image_part.h) and joins `images`.
std::variant<std::string, ApiError>
message_content(const json& m, size_t i, const ServingEngine& engine,
                std::vector<std::shared_ptr<pshard_image>>& images) {
  const std::string param = "messages[" + std::to_string(i) + "].content";
  auto it = m.find("content");
  if (it == m.end() || it->is_null())
    return std::string();
  if (it->is_string())
    return it->get<std::string>();
  if (!it->is_array())
    return bad_request("'" + param + "' must be a string or an array of parts", param,
                       "invalid_type");
  std::string text;
  for (size_t k = 0; k < it->size(); ++k) {
    const json& part = (*it)[k];
    const std::string part_param = param + "[" + std::to_string(k) + "]";
    const std::string type = part.is_object() ? part.value("type", "") : "";
    if (type == "image_url") {
      if (!engine.has_vision())
        return bad_request("'" + part_param +
                               "' is an image, but this server reads text only: "
                               "start pshard-server with --mmproj FILE (the model's projector)",
                           part_param, "images_unsupported");
      if (images.size() >= static_cast<size_t>(engine.max_images()))
        return bad_request("too many images: this request holds more than " +
                               std::to_string(engine.max_images()) +
                               ", the most pshard-server takes in one request (--max-images)",
                           part_param, "too_many_images");
      auto image = read_image_part(part, part_param);
      if (auto* e = std::get_if<ApiError>(&image))
        return *e;
      images.emplace_back(std::get<ImageHandle>(std::move(image)).release(), ImageFree{});
      text += kImagePlace;
      continue;
    }
    if (type != "text" || !part.contains("text") || !part["text"].is_string())
      return bad_request("'" + part_param +
                             "' must be {\"type\": \"text\", \"text\": ...} or "
                             "{\"type\": \"image_url\", \"image_url\": {\"url\": ...}}",
                         part_param, "invalid_value");
    text += part["text"].get<std::string>();
  }
  return text;
}

namespace {

// An assistant message's reasoning_content as the thought it was written after ("" when it
// has none): the template writes it back for the messages after the last user message, so
// a tool-calling run keeps its reasoning and its prompt only grows.
std::string recent_thought(const json& m, const ThoughtTags& tags) {
  const auto r = m.find("reasoning_content");
  if (r == m.end() || !r->is_string())
    return "";
  const std::string text = r->get<std::string>();
  const std::string_view thought = trim_space(text);
  if (thought.empty())
    return "";
  return std::string(tags.open) + "\n" + std::string(thought) + "\n" + std::string(tags.close) +
         "\n\n";
}

} // namespace

std::variant<std::string, ApiError>
chat_prompt(const json& body, const ServingEngine& engine, const ToolUse* tools,
            const ReasoningOptions& reasoning, std::vector<std::shared_ptr<pshard_image>>& images) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null())
    return bad_request("'messages' is required: the conversation so far", "messages",
                       "missing_required_parameter");
  if (!it->is_array() || it->empty())
    return bad_request("'messages' must be a non-empty array of {role, content} objects",
                       "messages", it->is_array() ? "invalid_value" : "invalid_type");
  std::vector<std::pair<std::string, std::string>> chat;
  CallNames names;
  const ToolFormat& format = engine.tool_format();
  auto makes_calls = [](const json& m) {
    const auto calls = m.find("tool_calls");
    return calls != m.end() && calls->is_array() && !calls->empty();
  };
  size_t answered = 0; // messages before the last final answer (an assistant's without calls)
  size_t asked = 0;    // the last user message
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    if (m.is_object() && m.value("role", json()) == "assistant" && !makes_calls(m))
      answered = i;
    if (m.is_object() && m.value("role", json()) == "user")
      asked = i;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return bad_request("'" + param + "' must be an object with a string 'role'", param + ".role",
                         "invalid_type");
    auto content = message_content(m, i, engine, images);
    if (auto* e = std::get_if<ApiError>(&content))
      return *e;
    if (format.drops_answered_analysis && i < answered && makes_calls(m))
      std::get<std::string>(content).clear();
    const std::string_view note = engine.thought_tags().no_thought_note;
    if (!note.empty() && !reasoning.enable_thinking && engine.thinks() && m["role"] == "user" &&
        !std::get<std::string>(content).ends_with(note))
      std::get<std::string>(content) += note;
    auto turn =
        tool_message(m, std::get<std::string>(std::move(content)), param, format, &names);
    if (auto* e = std::get_if<ApiError>(&turn))
      return *e;
    auto& said = std::get<std::pair<std::string, std::string>>(turn);
    if (format.keeps_recent_thoughts && engine.thinks() && i > asked && said.first == "assistant")
      said.second.insert(0, recent_thought(m, engine.thought_tags()));
    chat.push_back(std::move(said));
  }
  place_tools(chat, tools, engine.tool_format());
  auto text = engine.render_chat(chat);
  if (!text.ok())
    return bad_request(text.status().message(), "messages", "chat_template_unavailable");
  if (&engine.thought_tags() == &kHarmonyThoughtTags)
    set_reasoning_effort(*text, reasoning.effort);
  if (tools && tools->format->after_render)
    tools->format->after_render(*text);
  if (!reasoning.enable_thinking && engine.thinks()) { // an empty thought (closing one open)
    const ThoughtTags& tags = reasoning.tags == &kHarmonyToolThoughtTags ? kHarmonyToolThoughtTags
                                                                         : engine.thought_tags();
    *text +=
        engine.opens_thought() ? "\n" + std::string(tags.close) + "\n\n" : std::string(tags.empty);
  }
  return *text;
}

} // namespace

std::variant<std::vector<pshard_token>, ApiError> completion_prompt(const json& body,
                                                                    const ServingEngine& engine) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null())
    return bad_request("'prompt' is required: a string or an array of token ids", "prompt",
                       "missing_required_parameter");
  const json* p = &*it;
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string())
    p = &(*p)[0]; // ["text"]: one prompt
  if (auto suffix = body.find("suffix"); suffix != body.end() && !suffix->is_null()) {
    // OpenAI's insert mode: the prompt before, the suffix after, the answer between.
    if (!suffix->is_string() || !p->is_string())
      return bad_request("with 'suffix', 'prompt' and 'suffix' must be strings (the code "
                         "before and after the part to fill in)",
                         "suffix", "invalid_type");
    return infill_prompt(engine, {p->get<std::string>(), suffix->get<std::string>(), "", {}},
                         "suffix");
  }
  if (p->is_string()) {
    auto ids = engine.tokenize(p->get<std::string>(), true);
    if (!ids.ok())
      return bad_request(ids.status().message(), "prompt");
    return *ids;
  }
  if (!p->is_array() || p->empty())
    return bad_request("'prompt' must be a string or a non-empty array of token ids (one prompt "
                       "per request)",
                       "prompt", "invalid_type");
  std::vector<pshard_token> ids;
  for (size_t i = 0; i < p->size(); ++i) {
    const json& t = (*p)[i];
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= engine.n_vocab())
      return bad_request("'prompt[" + std::to_string(i) + "]' must be a token id below the " +
                             "vocabulary size " + std::to_string(engine.n_vocab()) + ", got " +
                             t.dump(),
                         "prompt", "invalid_value");
    ids.push_back(static_cast<pshard_token>(t.get<int64_t>()));
  }
  return ids;
}

namespace {

// Fields OpenAI has that pshard does not implement: refused, never silently ignored.
FieldError unsupported_fields(const json& body, Endpoint endpoint) {
  auto refuse = [](const char* key, const std::string& why) {
    return ApiError{400, "invalid_request_error",
                    std::string("'") + key + "' is not supported: " + why, key,
                    "unsupported_parameter"};
  };
  if (body.contains("functions") && !body["functions"].is_null())
    return refuse("functions", "use 'tools' (chat completions)");
  if (endpoint == Endpoint::kChat && body.contains("suffix") && !body["suffix"].is_null())
    return refuse("suffix", "fill-in-the-middle goes with /v1/completions");
  if (endpoint == Endpoint::kCompletions)
    for (const char* key :
         {"tools", "reasoning_format", "chat_template_kwargs", "reasoning_effort"})
      if (body.contains(key) && !body[key].is_null())
        return refuse(key, "it goes with /v1/chat/completions");
  if (body.contains("echo") && body["echo"].is_boolean() && body["echo"].get<bool>())
    return refuse("echo", "the prompt is not repeated in the answer");
  if (body.contains("best_of") && body["best_of"].is_number() && body["best_of"].get<double>() != 1)
    return refuse("best_of", "pshard does not rank choices; ask for 'n' choices and pick");
  return std::nullopt;
}

// OpenAI's {"token id": bias}: ids as strings, biases in [-100, 100], added to the logits.
FieldError read_logit_bias(const json& body, int64_t n_vocab, std::vector<pshard_logit_bias>& out) {
  auto it = body.find("logit_bias");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  if (!it->is_object())
    return bad_request("'logit_bias' must be an object mapping token ids to biases",
                       "logit_bias", "invalid_type");
  for (const auto& [key, value] : it->items()) {
    char* end = nullptr;
    const long long id = std::strtoll(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || id < 0 || id >= n_vocab)
      return bad_request("'logit_bias' keys must be token ids below the vocabulary size " +
                             std::to_string(n_vocab) + ", got \"" + key + "\"",
                         "logit_bias", "invalid_value");
    if (!value.is_number() || value.get<double>() < -100 || value.get<double>() > 100)
      return bad_request("'logit_bias' values must be numbers in [-100, 100], got " +
                             value.dump() + " for token " + key,
                         "logit_bias", "invalid_value");
    out.push_back({static_cast<pshard_token>(id), value.get<float>()});
  }
  return std::nullopt;
}

FieldError read_sampling(const json& body, Endpoint endpoint, GenerationRequest& r) {
  pshard_generate_params& g = r.sampling;
  double temperature = g.temperature, top_p = g.top_p, min_p = g.min_p, penalty = g.repeat_penalty;
  int64_t top_k = g.top_k, last_n = g.repeat_last_n, seed = static_cast<int64_t>(g.seed);
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "temperature", temperature, 0, 2));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "top_p", top_p, 0, 1));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "min_p", min_p, 0, 1));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "repeat_penalty", penalty, 0.01, 10));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "top_k", top_k, 0, 1 << 20));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "repeat_last_n", last_n, -1, 1 << 20));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "seed", seed, std::numeric_limits<int64_t>::min(),
                                          std::numeric_limits<int64_t>::max()));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "ignore_eos", g.ignore_eos));
  double frequency = 0, presence = 0;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "frequency_penalty", frequency, -2, 2));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "presence_penalty", presence, -2, 2));
  g.frequency_penalty = static_cast<float>(frequency);
  g.presence_penalty = static_cast<float>(presence);
  PSHARD_RETURN_IF_FIELD_ERROR(read_sampler_stages(body, g, r.sampler_strings));
  if (top_p == 0) { // OpenAI's top_p 0: only the most likely token
    temperature = 0;
    top_p = 1;
  }
  g.temperature = static_cast<float>(temperature);
  g.top_p = static_cast<float>(top_p);
  g.min_p = static_cast<float>(min_p);
  g.repeat_penalty = static_cast<float>(penalty);
  g.top_k = static_cast<int32_t>(top_k);
  g.repeat_last_n = static_cast<int32_t>(last_n);
  g.seed = static_cast<uint64_t>(seed);
  r.seeded = body.contains("seed") && !body["seed"].is_null() && seed != -1;

  r.max_tokens = endpoint == Endpoint::kCompletions ? 16 : -1; // OpenAI's defaults
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "max_tokens", r.max_tokens, 0, 1 << 30));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "max_completion_tokens", r.max_tokens, 0, 1 << 30));
  int64_t n = 1;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "n", n, 1, kMaxChoices));
  r.n = static_cast<int32_t>(n);
  // llama-server's: after a newline, stop once generating has taken this long.
  PSHARD_RETURN_IF_FIELD_ERROR(
      read_field(body, "t_max_predict_ms", r.t_max_predict_ms, 0, int64_t{1} << 40));
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "post_sampling_probs", r.post_sampling_probs));
  PSHARD_RETURN_IF_FIELD_ERROR(read_strings(body, "stop", 16, r.stop));
  for (const std::string& s : r.stop)
    if (s.empty())
      return bad_request("'stop' strings must not be empty", "stop", "invalid_value");
  if (endpoint == Endpoint::kCompletions) {
    // logprobs: N alternatives per token (OpenAI allows at most 5; pshard 20).
    int64_t n = -1;
    PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "logprobs", n, 0, 20));
    r.logprobs = n >= 0;
    r.top_logprobs = std::max<int64_t>(n, 0);
  } else {
    PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "logprobs", r.logprobs));
    PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "top_logprobs", r.top_logprobs, 0, 20));
    if (r.top_logprobs > 0 && !r.logprobs)
      return bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs", "invalid_value");
  }
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "stream", r.stream));
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object())
      return bad_request("'stream_options' must be an object", "stream_options", "invalid_type");
    PSHARD_RETURN_IF_FIELD_ERROR(read_field(*it, "include_usage", r.include_usage));
  }
  return std::nullopt;
}

} // namespace

namespace {

template <typename Json> std::variant<Json, ApiError> parse_object_as(const std::string& body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return bad_request("the request body is not valid JSON; send a JSON object with "
                       "Content-Type: application/json",
                       "", "invalid_json");
  if (!j.is_object())
    return bad_request("the request body must be a JSON object, got " + std::string(j.type_name()),
                       "", "invalid_json");
  return j;
}

} // namespace

std::variant<json, ApiError> parse_object(const std::string& body) {
  return parse_object_as<json>(body);
}

std::variant<nlohmann::ordered_json, ApiError> parse_ordered_object(const std::string& body) {
  return parse_object_as<nlohmann::ordered_json>(body);
}

std::variant<json, ApiError> parse_for_model(const std::string& text, const ServingEngine& engine) {
  auto parsed = parse_object(text);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return *e;
  PSHARD_RETURN_IF_FIELD_ERROR(read_model(std::get<json>(parsed), engine));
  return parsed;
}

FieldError read_model(const json& body, const ServingEngine& engine) {
  std::string model;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "model", model));
  if (!model.empty() && !engine.serves(model)) {
    std::string names;
    for (const std::string& id : engine.model_ids())
      names += (names.empty() ? "'" : ", '") + id + "'";
    return not_found_error("The model '" + model + "' does not exist; this server serves " + names +
                               " (GET /v1/models; pshard-server --alias adds names)",
                           "model", "model_not_found");
  }
  return std::nullopt;
}

std::variant<GenerationRequest, ApiError>
parse_generation(const std::string& text, Endpoint endpoint, const ServingEngine& engine) {
  auto parsed = parse_for_model(text, engine);
  if (auto* e = std::get_if<ApiError>(&parsed))
    return *e;
  const json& body = std::get<json>(parsed);
  GenerationRequest r;
  r.endpoint = endpoint;
  r.sampling = engine.default_sampling(); // the server's sampling flags, then the body's
  r.sampler_strings = engine.default_sampler_strings();
  PSHARD_RETURN_IF_FIELD_ERROR(unsupported_fields(body, endpoint));
  PSHARD_RETURN_IF_FIELD_ERROR(read_sampling(body, endpoint, r));
  if (!r.seeded)
    r.sampling.seed = engine.unseeded_seed();
  if (const int64_t cap = engine.n_predict(); cap >= 0) // llama-server's -n
    r.max_tokens = r.max_tokens < 0 ? cap : std::min(r.max_tokens, cap);
  PSHARD_RETURN_IF_FIELD_ERROR(read_logit_bias(body, engine.n_vocab(), r.logit_bias));
  // Schemas are read in their own key order (properties are generated in it), which
  // nlohmann::json's sorted objects would lose.
  const auto ordered = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  PSHARD_RETURN_IF_FIELD_ERROR(read_structured_output(ordered, r.output));
  if (endpoint == Endpoint::kChat) {
    PSHARD_RETURN_IF_FIELD_ERROR(read_tools(ordered, engine.tool_format(), r.tools));
    PSHARD_RETURN_IF_FIELD_ERROR(
        read_reasoning_options(body, engine.reasoning_format(), r.reasoning));
    r.reasoning.opened = engine.opens_thought() && r.reasoning.enable_thinking;
    r.reasoning.tags = &engine.thought_tags();
    if (r.tools && r.reasoning.tags == &kHarmonyThoughtTags) // a call may end the analysis too
      r.reasoning.tags = &kHarmonyToolThoughtTags;
    if (engine.thinks() && r.reasoning.enable_thinking) { // let the model think first
      if (!r.output.grammar.empty()) {
        r.output.grammar = grammar_after_thought(r.output.grammar, *r.reasoning.tags);
        r.output.trigger = r.reasoning.tags->close;
      }
      if (r.tools && r.tools->from_start) {
        r.tools->grammar = grammar_after_thought(r.tools->grammar, *r.reasoning.tags);
        r.tools->trigger = r.reasoning.tags->close;
      } else if (r.tools) {
        r.tools->skip_thought = r.reasoning.format == ReasoningFormat::kDeepseek;
      }
    }
  }
  if (r.tools && !r.output.grammar.empty())
    return bad_request("give 'tools' or a 'response_format' / 'json_schema' / 'grammar', not "
                       "both",
                       "tools", "invalid_value");

  const char* prompt_param = endpoint == Endpoint::kChat ? "messages" : "prompt";
  if (endpoint == Endpoint::kChat) {
    auto text = chat_prompt(body, engine, r.tools ? &*r.tools : nullptr, r.reasoning, r.images);
    if (auto* e = std::get_if<ApiError>(&text))
      return *e;
    r.rendered = std::get<std::string>(text);
    if (!r.images.empty()) { // the batch counts its tokens once the image is encoded
      r.prompt_text = std::move(std::get<std::string>(text));
      return r;
    }
    auto ids = engine.tokenize(std::get<std::string>(text), true);
    if (!ids.ok())
      return bad_request(ids.status().message(), "messages");
    r.prompt = std::move(*ids);
  } else {
    auto ids = completion_prompt(body, engine);
    if (auto* e = std::get_if<ApiError>(&ids))
      return *e;
    r.prompt = std::move(std::get<std::vector<pshard_token>>(ids));
  }
  const auto n_prompt = static_cast<int64_t>(r.prompt.size());
  const int64_t n_ctx = engine.n_ctx();
  if (n_prompt > n_ctx)
    return bad_request("This model's maximum context length is " + std::to_string(n_ctx) +
                           " tokens. However, your " + prompt_param + " resulted in " +
                           std::to_string(n_prompt) + " tokens. Please reduce the length.",
                       prompt_param, "context_length_exceeded");
  if (r.max_tokens >= 0 && n_prompt + r.max_tokens > n_ctx)
    return bad_request("This model's maximum context length is " + std::to_string(n_ctx) +
                           " tokens. However, you requested " +
                           std::to_string(n_prompt + r.max_tokens) + " tokens (" +
                           std::to_string(n_prompt) + " in the " + prompt_param + ", " +
                           std::to_string(r.max_tokens) +
                           " in the completion). Please reduce the length or max_tokens.",
                       "max_tokens", "context_length_exceeded");
  return r;
}

} // namespace pshard::server
