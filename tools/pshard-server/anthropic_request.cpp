#include "tools/pshard-server/anthropic_request.h"

#include "tools/pshard-server/chat_translation.h"
#include "tools/pshard-server/sampler_fields.h"

#include <string>

namespace pshard::server {
namespace {

using json = nlohmann::ordered_json;

std::string text_of(const json& content) {
  if (content.is_string())
    return content.get<std::string>();
  std::string s;
  if (content.is_array())
    for (const json& block : content)
      if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
          block["text"].is_string())
        s += block["text"].get<std::string>();
  return s;
}

// One Anthropic message as chat messages: a user message's tool_result blocks become tool
// messages (first, as Anthropic puts them), its text and images a user message; an
// assistant message's text and tool_use blocks one assistant message.
std::variant<json, ApiError> turns_of(const json& m, const std::string& param) {
  if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
    return bad_request("'" + param + "' must be {\"role\", \"content\"}", param, "invalid_type");
  const std::string role = m["role"].get<std::string>();
  if (role != "user" && role != "assistant")
    return bad_request("'" + param +
                           ".role' must be user or assistant (the system prompt goes "
                           "in 'system')",
                       param + ".role", "invalid_value");
  const json content = m.contains("content") ? m["content"] : json("");
  json turns = json::array();
  if (content.is_string()) {
    turns.push_back({{"role", role}, {"content", content}});
    return turns;
  }
  if (!content.is_array())
    return bad_request("'" + param + ".content' must be a string or an array of blocks",
                       param + ".content", "invalid_type");
  json parts = json::array(), calls = json::array();
  for (size_t k = 0; k < content.size(); ++k) {
    const json& b = content[k];
    const std::string p = param + ".content[" + std::to_string(k) + "]";
    const std::string type = b.is_object() ? b.value("type", "") : "";
    if (type == "text" && b.contains("text") && b["text"].is_string()) {
      parts.push_back({{"type", "text"}, {"text", b["text"]}});
    } else if (type == "image" && role == "user" && b.contains("source") &&
               b["source"].is_object() && b["source"].value("type", "") == "base64") {
      const json& s = b["source"];
      parts.push_back({{"type", "image_url"},
                       {"image_url",
                        {{"url", "data:" + s.value("media_type", "image/png") + ";base64," +
                                     s.value("data", "")}}}});
    } else if (type == "tool_result" && role == "user" && b.contains("tool_use_id") &&
               b["tool_use_id"].is_string()) {
      turns.push_back({{"role", "tool"},
                       {"tool_call_id", b["tool_use_id"]},
                       {"content", text_of(b.contains("content") ? b["content"] : json(""))}});
    } else if (type == "tool_use" && role == "assistant" && b.contains("name") &&
               b["name"].is_string() && b.contains("id") && b["id"].is_string()) {
      calls.push_back(
          {{"id", b["id"]},
           {"type", "function"},
           {"function",
            {{"name", b["name"]},
             {"arguments", (b.contains("input") ? b["input"] : json::object()).dump()}}}});
    } else if ((type == "thinking" || type == "redacted_thinking") && role == "assistant") {
      continue; // an earlier thought is not shown to the model again
    } else {
      return bad_request("'" + p +
                             "' is not a block pshard reads: text, image (a base64 source) "
                             "and tool_result in user messages; text, tool_use and thinking in "
                             "assistant messages",
                         p, "invalid_value");
    }
  }
  if (role == "assistant") {
    json turn = {{"role", "assistant"}, {"content", parts.empty() ? json(nullptr) : json(parts)}};
    if (!calls.empty())
      turn["tool_calls"] = calls;
    turns.push_back(turn);
  } else if (!parts.empty() || turns.empty()) {
    turns.push_back({{"role", "user"}, {"content", parts}});
  }
  return turns;
}

// A client tool {name, description, input_schema} as a chat function.
std::variant<json, ApiError> tool_entry(const json& t, const std::string& param) {
  if (!t.is_object() || (t.contains("type") && t["type"] != "custom") || !t.contains("name"))
    return bad_request("'" + param +
                           "' must be a client tool {name, description, "
                           "input_schema}: pshard runs no server tools (web search, code "
                           "execution, ...)",
                       param, "invalid_value");
  json f = {{"name", t["name"]}};
  if (t.contains("description"))
    f["description"] = t["description"];
  f["parameters"] = t.contains("input_schema") ? t["input_schema"] : json{{"type", "object"}};
  return f;
}

} // namespace

std::variant<json, ApiError> messages_as_chat(const json& body) {
  if (!body.contains("max_tokens") || body["max_tokens"].is_null())
    return bad_request("'max_tokens' is required: the most tokens to answer with", "max_tokens",
                       "missing_required_parameter");
  json messages = json::array();
  if (auto s = body.find("system"); s != body.end() && !s->is_null())
    messages.push_back({{"role", "system"}, {"content", text_of(*s)}});
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty())
    return bad_request("'messages' must be a non-empty array of {role, content}", "messages",
                       it == body.end() ? "missing_required_parameter" : "invalid_type");
  for (size_t i = 0; i < it->size(); ++i) {
    auto turns = turns_of((*it)[i], "messages[" + std::to_string(i) + "]");
    if (auto* e = std::get_if<ApiError>(&turns))
      return *e;
    for (json& t : std::get<json>(turns))
      messages.push_back(std::move(t));
  }
  json chat = {{"messages", messages}};
  // Sampling, and pshard's extras (a grammar, a schema) under their own names.
  copy_fields(body, chat,
              {"model", "max_tokens", "temperature", "top_p", "top_k", "stream", "seed", "min_p",
               "repeat_penalty", "ignore_eos", "grammar", "json_schema"});
  copy_fields(body, chat, kSamplerStageFields); // llama-server's other samplers
  copy_field(body, "stop_sequences", chat, "stop");
  PSHARD_RETURN_IF_FIELD_ERROR(copy_tools(body, tool_entry, chat));
  if (auto c = body.find("tool_choice"); c != body.end() && c->is_object()) {
    const std::string type = c->value("type", "auto");
    if (type == "any")
      chat["tool_choice"] = "required";
    else if (type == "tool")
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", c->value("name", "")}}}};
    else if (type == "auto" || type == "none")
      chat["tool_choice"] = type;
    else
      return bad_request("'tool_choice.type' must be auto, any, tool or none", "tool_choice.type",
                         "invalid_value");
    if (c->value("disable_parallel_tool_use", false))
      chat["parallel_tool_calls"] = false;
  }
  const bool thinking = body.contains("thinking") && body["thinking"].is_object() &&
                        body["thinking"].value("type", "") == "enabled";
  chat["chat_template_kwargs"] = {{"enable_thinking", thinking}};
  return chat;
}

nlohmann::json anthropic_error_json(const ApiError& e) {
  std::string type = e.type;
  if (e.status == 404)
    type = "not_found_error";
  else if (e.status == 503)
    type = "overloaded_error";
  else if (e.status >= 500)
    type = "api_error";
  return nlohmann::json{{"type", "error"}, {"error", {{"type", type}, {"message", e.message}}}};
}

} // namespace pshard::server
