#include "tools/pshard-server/anthropic_answer.h"

#include "tools/pshard-server/anthropic_request.h"

namespace pshard::server {

using nlohmann::json;

namespace {

const char* stop_reason(pshard_finish_reason finish, bool made_calls, const json& stop_sequence) {
  if (finish == PSHARD_FINISH_LENGTH)
    return "max_tokens";
  if (made_calls)
    return "tool_use";
  return stop_sequence.is_null() ? "end_turn" : "stop_sequence";
}

json tool_use_block(const json& call) {
  const std::string arguments = call["function"]["arguments"];
  json input = json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return {{"type", "tool_use"},
          {"id", call["id"]},
          {"name", call["function"]["name"]},
          {"input", input.is_object() ? input : json::object()}};
}

json usage(int64_t n_prompt, int64_t n_cached, int64_t n_generated) {
  return {{"input_tokens", n_prompt},
          {"cache_read_input_tokens", n_cached},
          {"cache_creation_input_tokens", 0},
          {"output_tokens", n_generated}};
}

} // namespace

ResponseHeader new_anthropic_header(const std::string& model) {
  ResponseHeader h = new_header(Endpoint::kChat, model);
  h.id = "msg_" + h.id.substr(h.id.find('-') + 1);
  return h;
}

std::string tool_use_id_prefix(const ResponseHeader& h) {
  return "toolu_" + h.id.substr(h.id.find('_') + 1) + "_";
}

json anthropic_message(const ResponseHeader& h, const ChatAnswer& a, const Completion& c,
                       const json& stop_sequence) {
  json content = json::array();
  if (a.reasoning.is_string() && !a.reasoning.get<std::string>().empty())
    content.push_back({{"type", "thinking"}, {"thinking", a.reasoning}, {"signature", ""}});
  const std::string text =
      a.message.content.is_string() ? a.message.content.get<std::string>() : "";
  if (!text.empty() || a.message.tool_calls.empty())
    content.push_back({{"type", "text"}, {"text", text}});
  for (const json& call : a.message.tool_calls)
    content.push_back(tool_use_block(call));
  return {{"id", h.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", h.model},
          {"content", content},
          {"stop_reason", stop_reason(c.finish, !a.message.tool_calls.empty(), stop_sequence)},
          {"stop_sequence", stop_sequence},
          {"usage", usage(c.n_prompt, c.n_cached, c.n_generated)}};
}

AnthropicStream::AnthropicStream(const GenerationRequest& r, ResponseHeader header)
    : header_(std::move(header)), answer_(r, tool_use_id_prefix(header_)), stops_(r.stop) {}

std::string AnthropicStream::event(const char* type, json body) {
  body["type"] = type;
  return std::string("event: ") + type + "\n" + sse(body);
}

std::string AnthropicStream::open_block(const json& block) {
  open_type_ = block["type"];
  text_seen_ = text_seen_ || open_type_ == "text";
  return event("content_block_start", {{"index", ++index_}, {"content_block", block}});
}

std::string AnthropicStream::close_block() {
  std::string out;
  if (open_type_ == "thinking") // Anthropic's SDKs expect a signature; pshard signs nothing
    out += event("content_block_delta",
                 {{"index", index_}, {"delta", {{"type", "signature_delta"}, {"signature", ""}}}});
  open_type_.clear();
  return out + event("content_block_stop", {{"index", index_}});
}

std::string AnthropicStream::on_event(const TokenEvent& e) {
  std::string out;
  if (!started_) {
    started_ = true;
    json message = {{"id", header_.id},         {"type", "message"},
                    {"role", "assistant"},      {"model", header_.model},
                    {"content", json::array()}, {"stop_reason", nullptr},
                    {"stop_sequence", nullptr}, {"usage", usage(e.n_prompt, e.n_cached, 0)}};
    out += event("message_start", {{"message", message}});
  }
  AnswerStream::Delta d = answer_.push(e);
  if (!d.reasoning.empty()) {
    if (open_type_ != "thinking")
      out += open_block({{"type", "thinking"}, {"thinking", ""}});
    out += event(
        "content_block_delta",
        {{"index", index_}, {"delta", {{"type", "thinking_delta"}, {"thinking", d.reasoning}}}});
  }
  if (!d.content.empty()) {
    if (open_type_ == "thinking")
      out += close_block();
    if (open_type_ != "text")
      out += open_block({{"type", "text"}, {"text", ""}});
    out += event("content_block_delta",
                 {{"index", index_}, {"delta", {{"type", "text_delta"}, {"text", d.content}}}});
  }
  for (const json& delta : d.call_deltas) { // each call a tool_use block, its input as it comes
    if (delta.contains("id")) {
      if (!open_type_.empty())
        out += close_block();
      out += open_block({{"type", "tool_use"},
                         {"id", delta["id"]},
                         {"name", delta["function"]["name"]},
                         {"input", json::object()}});
      ++calls_;
    }
    const std::string piece = delta["function"].value("arguments", "");
    if (!piece.empty())
      out += event(
          "content_block_delta",
          {{"index", index_}, {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}});
  }
  if (!d.last)
    return out;
  const json stop = stop_string_json(stops_, e.stop_string);
  if (open_type_ == "thinking")
    out += close_block();
  if (!text_seen_ && d.calls.empty() && calls_ == 0)
    out += open_block({{"type", "text"}, {"text", ""}}); // an empty answer is still text
  if (!open_type_.empty())
    out += close_block();
  out += event("message_delta", {{"delta",
                                  {{"stop_reason", stop_reason(e.finish, !d.calls.empty(), stop)},
                                   {"stop_sequence", stop}}},
                                 {"usage", {{"output_tokens", e.n_generated}}}});
  out += event("message_stop", json::object());
  return out;
}

std::string AnthropicStream::error(const ApiError& e) {
  json body = anthropic_error_json(e);
  body.erase("type");
  return event("error", body);
}

} // namespace pshard::server
