#include "tools/pshard-server/responses_request.h"

#include "tools/pshard-server/chat_translation.h"
#include "tools/pshard-server/reasoning.h"
#include "tools/pshard-server/sampler_fields.h"

#include <string>

namespace pshard::server {
namespace {

using json = nlohmann::ordered_json;

ApiError refuse(const std::string& key, const std::string& why) {
  return ApiError{400, "invalid_request_error", "'" + key + "' is not supported: " + why, key,
                  "unsupported_parameter"};
}

// A message's content: a string, or input_text / output_text / input_image parts as chat
// parts.
std::variant<json, ApiError> content_of(const json& item, const std::string& param) {
  auto it = item.find("content");
  if (it == item.end() || it->is_null() || it->is_string())
    return it == item.end() || it->is_null() ? json("") : *it;
  if (!it->is_array())
    return bad_request("'" + param + ".content' must be a string or an array of parts",
                       param + ".content", "invalid_type");
  json parts = json::array();
  for (size_t k = 0; k < it->size(); ++k) {
    const json& part = (*it)[k];
    const std::string p = param + ".content[" + std::to_string(k) + "]";
    const std::string type = part.is_object() ? part.value("type", "") : "";
    if ((type == "input_text" || type == "output_text" || type == "text") &&
        part.contains("text") && part["text"].is_string()) {
      parts.push_back({{"type", "text"}, {"text", part["text"]}});
    } else if (type == "refusal" && part.contains("refusal") && part["refusal"].is_string()) {
      parts.push_back({{"type", "text"}, {"text", part["refusal"]}});
    } else if (type == "input_image" && part.contains("image_url") &&
               part["image_url"].is_string()) {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", part["image_url"]}}}});
    } else {
      return bad_request("'" + p +
                             "' must be an input_text, output_text or input_image part "
                             "(input_image with an image_url; file inputs are not read)",
                         p, "invalid_value");
    }
  }
  return parts;
}

std::string text_of(const json& output) {
  if (output.is_string())
    return output.get<std::string>();
  std::string s;
  if (output.is_array())
    for (const json& part : output)
      if (part.is_object() && part.contains("text") && part["text"].is_string())
        s += part["text"].get<std::string>();
  return s;
}

std::variant<json, ApiError> messages_of(const json& body) {
  json messages = json::array();
  if (auto it = body.find("instructions"); it != body.end() && !it->is_null()) {
    if (!it->is_string())
      return bad_request("'instructions' must be a string", "instructions", "invalid_type");
    messages.push_back({{"role", "system"}, {"content", *it}});
  }
  auto input = body.find("input");
  if (input == body.end() || input->is_null())
    return bad_request("'input' is required: a string or an array of input items", "input",
                       "missing_required_parameter");
  if (input->is_string()) {
    messages.push_back({{"role", "user"}, {"content", *input}});
    return messages;
  }
  if (!input->is_array() || input->empty())
    return bad_request("'input' must be a string or a non-empty array of input items", "input",
                       "invalid_type");
  for (size_t i = 0; i < input->size(); ++i) {
    const json& item = (*input)[i];
    const std::string param = "input[" + std::to_string(i) + "]";
    if (!item.is_object())
      return bad_request("'" + param + "' must be an object", param, "invalid_type");
    const std::string type = item.value("type", item.contains("role") ? "message" : "");
    if (type == "message") {
      std::string role =
          item.contains("role") && item["role"].is_string() ? item["role"].get<std::string>() : "";
      if (role != "user" && role != "assistant" && role != "system" && role != "developer")
        return bad_request("'" + param + ".role' must be user, assistant, system or developer",
                           param + ".role", "invalid_value");
      auto content = content_of(item, param);
      if (auto* e = std::get_if<ApiError>(&content))
        return *e;
      messages.push_back(
          {{"role", role == "developer" ? "system" : role}, {"content", std::get<json>(content)}});
    } else if (type == "function_call") {
      for (const char* key : {"call_id", "name", "arguments"})
        if (!item.contains(key) || !item[key].is_string())
          return bad_request("'" + param + "." + key + "' must be a string", param + "." + key,
                             "invalid_type");
      const json call = {{"id", item["call_id"]},
                         {"type", "function"},
                         {"function", {{"name", item["name"]}, {"arguments", item["arguments"]}}}};
      // Calls that follow each other are one assistant turn.
      if (!messages.empty() && messages.back()["role"] == "assistant" &&
          messages.back().contains("tool_calls"))
        messages.back()["tool_calls"].push_back(call);
      else
        messages.push_back(
            {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array({call})}});
    } else if (type == "function_call_output") {
      if (!item.contains("call_id") || !item["call_id"].is_string() || !item.contains("output"))
        return bad_request("'" + param + "' must have a string call_id and an output", param,
                           "invalid_type");
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", item["call_id"]},
                          {"content", text_of(item["output"])}});
    } else if (type == "reasoning") {
      continue; // an earlier thought is not shown to the model again
    } else {
      return bad_request("'" + param + ".type' \"" + type +
                             "\" is not read: pshard takes "
                             "message, function_call, function_call_output and reasoning items",
                         param + ".type", "invalid_value");
    }
  }
  return messages;
}

// A function tool {"type": "function", "name", "description", "parameters"} as a chat
// function.
std::variant<json, ApiError> tool_entry(const json& t, const std::string& param) {
  if (!t.is_object() || t.value("type", "") != "function")
    return bad_request("'" + param +
                           "' must be a function tool: pshard has no built-in tools "
                           "(web_search, file_search, ...)",
                       param, "invalid_value");
  json f = json::object();
  copy_fields(t, f, {"name", "description", "parameters", "strict"});
  return f;
}

} // namespace

std::variant<json, ApiError> responses_as_chat(const json& body) { // (ordered_json)
  for (const char* key : {"previous_response_id", "conversation"})
    if (body.contains(key) && !body[key].is_null())
      return refuse(key, "pshard-server keeps no responses; send the whole conversation in "
                         "'input'");
  if (body.contains("background") && body["background"] == true)
    return refuse("background", "responses are answered while the request waits");
  auto messages = messages_of(body);
  if (auto* e = std::get_if<ApiError>(&messages))
    return *e;
  json chat = {{"messages", std::get<json>(messages)}};
  // Sampling and pshard's extras pass through under their own names.
  copy_fields(body, chat,
              {"model", "temperature", "top_p", "stream", "parallel_tool_calls", "seed", "top_k",
               "min_p", "repeat_penalty", "frequency_penalty", "presence_penalty", "logit_bias",
               "stop", "reasoning_format", "chat_template_kwargs", "grammar", "json_schema",
               "ignore_eos"});
  copy_fields(body, chat, kSamplerStageFields); // llama-server's other samplers
  copy_field(body, "max_output_tokens", chat, "max_tokens");
  PSHARD_RETURN_IF_FIELD_ERROR(copy_tools(body, tool_entry, chat));
  if (auto it = body.find("tool_choice"); it != body.end() && !it->is_null())
    chat["tool_choice"] =
        it->is_object() && it->value("type", "") == "function" && it->contains("name")
            ? json{{"type", "function"}, {"function", {{"name", (*it)["name"]}}}}
            : *it;
  if (auto text = body.find("text"); text != body.end() && text->is_object()) {
    if (auto f = text->find("format"); f != text->end() && f->is_object()) {
      const std::string type = f->value("type", "");
      if (type == "json_schema") {
        json schema = {{"name", f->value("name", "answer")}};
        for (const char* key : {"schema", "strict", "description"})
          if (f->contains(key))
            schema[key] = (*f)[key];
        chat["response_format"] = {{"type", "json_schema"}, {"json_schema", schema}};
      } else if (type == "json_object") {
        chat["response_format"] = {{"type", "json_object"}};
      } else if (type != "text") {
        return bad_request("'text.format.type' must be text, json_object or json_schema",
                           "text.format.type", "invalid_value");
      }
    }
  }
  if (auto r = body.find("reasoning");
      r != body.end() && r->is_object() &&
      (r->value("effort", "") == "none" || r->value("effort", "") == "minimal") &&
      !chat.contains("chat_template_kwargs"))
    chat["chat_template_kwargs"] = {{"enable_thinking", false}};
  if (auto r = body.find("reasoning"); r != body.end() && r->is_object())
    for (std::string_view level : kReasoningEfforts)
      if (r->value("effort", "") == level) // gpt-oss's reasoning level
        chat["reasoning_effort"] = std::string(level);
  return chat;
}

ApiError as_responses_error(ApiError e) {
  auto rename = [&](const std::string& from, const std::string& to) {
    if (e.param.rfind(from, 0) == 0)
      e.param = to + e.param.substr(from.size());
  };
  rename("messages", "input");
  rename("max_tokens", "max_output_tokens");
  rename("response_format", "text.format");
  return e;
}

} // namespace pshard::server
