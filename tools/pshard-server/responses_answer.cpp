#include "tools/pshard-server/responses_answer.h"

namespace pshard::server {

using nlohmann::json;

namespace {

// "resp_X" -> "msg_X" and the like: one answer's items share its id.
std::string item_id(const ResponseHeader& h, const char* prefix) {
  return prefix + h.id.substr(h.id.find('_') + 1);
}

json reasoning_item(const ResponseHeader& h, const std::string& text, const char* status) {
  return {{"type", "reasoning"},
          {"id", item_id(h, "rs_")},
          {"status", status},
          {"summary", json::array()},
          {"content", json::array({{{"type", "reasoning_text"}, {"text", text}}})}};
}

json text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}

json message_item(const ResponseHeader& h, const json& content, const char* status) {
  return {{"type", "message"},
          {"id", item_id(h, "msg_")},
          {"status", status},
          {"role", "assistant"},
          {"content", content}};
}

json call_item(const ResponseHeader& h, const json& call, size_t n, const char* status) {
  return {{"type", "function_call"},
          {"id", item_id(h, "fc_") + "_" + std::to_string(n)},
          {"status", status},
          {"call_id", call["id"]},
          {"name", call["function"]["name"]},
          {"arguments", call["function"]["arguments"]}};
}

} // namespace

ResponseHeader new_responses_header(const std::string& model) {
  ResponseHeader h = new_header(Endpoint::kChat, model);
  h.id = "resp_" + h.id.substr(h.id.find('-') + 1);
  return h;
}

json output_items(const ResponseHeader& h, const ChatAnswer& a) {
  json items = json::array();
  if (a.reasoning.is_string() && !a.reasoning.get<std::string>().empty())
    items.push_back(reasoning_item(h, a.reasoning.get<std::string>(), "completed"));
  const std::string content =
      a.message.content.is_string() ? a.message.content.get<std::string>() : "";
  if (!content.empty() || a.message.tool_calls.empty())
    items.push_back(message_item(h, json::array({text_part(content)}), "completed"));
  for (size_t n = 0; n < a.message.tool_calls.size(); ++n)
    items.push_back(call_item(h, a.message.tool_calls[n], n, "completed"));
  return items;
}

json responses_usage(int64_t n_prompt, int64_t n_cached, int64_t n_generated,
                     int64_t reasoning_tokens) {
  json u = {{"input_tokens", n_prompt},
            {"input_tokens_details", {{"cached_tokens", n_cached}}},
            {"output_tokens", n_generated},
            {"total_tokens", n_prompt + n_generated}};
  if (reasoning_tokens >= 0)
    u["output_tokens_details"] = {{"reasoning_tokens", reasoning_tokens}};
  return u;
}

json response_json(const ResponseHeader& h, const json& request, pshard_finish_reason finish,
                   const json& output, const json& usage) {
  const char* status = finish == PSHARD_FINISH_NONE     ? "in_progress"
                       : finish == PSHARD_FINISH_LENGTH ? "incomplete"
                                                        : "completed";
  json r = {{"id", h.id},
            {"object", "response"},
            {"created_at", h.created},
            {"status", status},
            {"error", nullptr},
            {"incomplete_details", finish == PSHARD_FINISH_LENGTH
                                       ? json{{"reason", "max_output_tokens"}}
                                       : json(nullptr)},
            {"model", h.model},
            {"output", output},
            {"usage", usage},
            {"store", false},
            {"previous_response_id", nullptr}};
  for (const char* key : {"instructions", "max_output_tokens", "temperature", "top_p", "tools",
                          "tool_choice", "parallel_tool_calls", "text", "reasoning", "metadata"})
    r[key] = request.contains(key) ? request[key] : json(nullptr);
  if (r["tools"].is_null())
    r["tools"] = json::array();
  if (r["tool_choice"].is_null())
    r["tool_choice"] = "auto";
  if (r["parallel_tool_calls"].is_null())
    r["parallel_tool_calls"] = true;
  return r;
}

ResponseStream::ResponseStream(const GenerationRequest& r, ResponseHeader header, json request)
    : header_(std::move(header)), request_(std::move(request)),
      answer_(r, tool_call_id_prefix(header_)) {}

std::string ResponseStream::event(const char* type, json body) {
  body["type"] = type;
  body["sequence_number"] = sequence_++;
  return std::string("event: ") + type + "\n" + sse(body);
}

std::string ResponseStream::opening() {
  const json r = response_json(header_, request_, PSHARD_FINISH_NONE, json::array(), nullptr);
  // One statement each: the events are numbered in the order they are made.
  std::string out = event("response.created", {{"response", r}});
  out += event("response.in_progress", {{"response", r}});
  return out;
}

std::string ResponseStream::open_reasoning() {
  reasoning_open_ = true;
  ++output_index_;
  return event(
      "response.output_item.added",
      {{"output_index", output_index_}, {"item", reasoning_item(header_, "", "in_progress")}});
}

std::string ResponseStream::close_reasoning() {
  reasoning_open_ = false;
  reasoning_done_ = true;
  const json item = reasoning_item(header_, reasoning_, "completed");
  done_items_.push_back(item);
  std::string out = event("response.reasoning_text.done", {{"item_id", item["id"]},
                                                           {"output_index", output_index_},
                                                           {"content_index", 0},
                                                           {"text", reasoning_}});
  out += event("response.output_item.done", {{"output_index", output_index_}, {"item", item}});
  return out;
}

std::string ResponseStream::open_message() {
  message_open_ = true;
  ++output_index_;
  const std::string id = item_id(header_, "msg_");
  std::string out = event("response.output_item.added",
                          {{"output_index", output_index_},
                           {"item", message_item(header_, json::array(), "in_progress")}});
  out += event("response.content_part.added", {{"item_id", id},
                                               {"output_index", output_index_},
                                               {"content_index", 0},
                                               {"part", text_part("")}});
  return out;
}

std::string ResponseStream::close_message() {
  message_open_ = false;
  const json item = message_item(header_, json::array({text_part(content_)}), "completed");
  done_items_.push_back(item);
  const json where = {
      {"item_id", item["id"]}, {"output_index", output_index_}, {"content_index", 0}};
  json text_done = where, part_done = where;
  text_done["text"] = content_;
  part_done["part"] = text_part(content_);
  std::string out = event("response.output_text.done", text_done);
  out += event("response.content_part.done", part_done);
  out += event("response.output_item.done", {{"output_index", output_index_}, {"item", item}});
  return out;
}

std::string ResponseStream::open_call(const json& delta) {
  std::string out;
  if (reasoning_open_)
    out += close_reasoning();
  if (message_open_)
    out += close_message();
  if (!call_.is_null())
    out += close_call();
  ++output_index_;
  const json call = {{"id", delta["id"]},
                     {"function", {{"name", delta["function"]["name"]}, {"arguments", ""}}}};
  call_ = call_item(header_, call, calls_++, "in_progress");
  return out + event("response.output_item.added", {{"output_index", output_index_}, {"item", call_}});
}

std::string ResponseStream::call_arguments(const std::string& piece) {
  call_["arguments"] = call_["arguments"].get<std::string>() + piece;
  return event("response.function_call_arguments.delta",
               {{"item_id", call_["id"]}, {"output_index", output_index_}, {"delta", piece}});
}

std::string ResponseStream::close_call() {
  json done = {{"item_id", call_["id"]}, {"output_index", output_index_}};
  done["arguments"] = call_["arguments"];
  std::string out = event("response.function_call_arguments.done", done);
  call_["status"] = "completed";
  done_items_.push_back(call_);
  out += event("response.output_item.done", {{"output_index", output_index_}, {"item", call_}});
  call_ = nullptr;
  return out;
}

std::string ResponseStream::on_event(const TokenEvent& e) {
  std::string out;
  AnswerStream::Delta d = answer_.push(e);
  if (!d.reasoning.empty()) {
    if (!reasoning_open_ && !reasoning_done_)
      out += open_reasoning();
    reasoning_ += d.reasoning;
    out += event("response.reasoning_text.delta", {{"item_id", item_id(header_, "rs_")},
                                                   {"output_index", output_index_},
                                                   {"content_index", 0},
                                                   {"delta", d.reasoning}});
  }
  if (!d.content.empty()) {
    if (reasoning_open_)
      out += close_reasoning();
    if (!message_open_)
      out += open_message();
    content_ += d.content;
    out += event("response.output_text.delta", {{"item_id", item_id(header_, "msg_")},
                                                {"output_index", output_index_},
                                                {"content_index", 0},
                                                {"delta", d.content}});
  }
  for (const json& delta : d.call_deltas) {
    if (delta.contains("id"))
      out += open_call(delta);
    const std::string piece = delta["function"].value("arguments", "");
    if (!piece.empty())
      out += call_arguments(piece);
  }
  if (!d.last)
    return out;
  if (reasoning_open_)
    out += close_reasoning();
  if (!message_open_ && d.calls.empty() && calls_ == 0)
    out += open_message(); // an empty answer is still a message
  if (message_open_)
    out += close_message();
  if (!call_.is_null())
    out += close_call();
  const json r = response_json(
      header_, request_, e.finish, done_items_,
      responses_usage(e.n_prompt, e.n_cached, e.n_generated, answer_.reasoning_tokens()));
  out += event(e.finish == PSHARD_FINISH_LENGTH ? "response.incomplete" : "response.completed",
               {{"response", r}});
  return out;
}

std::string ResponseStream::error(const ApiError& e) {
  return event("error", {{"code", e.code.empty() ? json(nullptr) : json(e.code)},
                         {"message", e.message},
                         {"param", e.param.empty() ? json(nullptr) : json(e.param)}});
}

} // namespace pshard::server
