// Reading calls back from an answer (tool_calls.h), whole (parse_tool_answer) or as it
// streams (streamable_prefix, ToolCallStream): text only, no grammar or model.
#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/tool_calls.h"
#include "tools/pshard-server/xml_args.h"

#include <algorithm>
#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

enum class OpenMatch { kNo, kPartial, kWhole };

// Whether a call opens at text[at]: the format's opening text, or with the text ending
// inside it, a part. A bare JSON call may have whitespace after its '{' (a grammar-led
// answer of tool_choice "required" writes `{ "name" : ...`).
OpenMatch match_open(const std::string& text, size_t at, const ToolFormat& format) {
  const std::string_view open = format.call_open;
  const bool json_call = *format.call_close == '\0';
  size_t t = at;
  for (size_t i = 0; i < open.size(); ++i, ++t) {
    if (json_call && i > 0 && open[i - 1] == '{')
      while (t < text.size() && is_space(text[t]))
        ++t;
    if (t == text.size())
      return OpenMatch::kPartial;
    if (text[t] != open[i])
      return OpenMatch::kNo;
  }
  return OpenMatch::kWhole;
}

// A kNamedArgs call whose name starts at text[from]: {"name", "arguments"[, "id"]}, the
// arguments up to the next call's `open` or the end; null when it is not whole. `*end`:
// where the call's text ends.
ordered_json named_args_call(const std::string& text, size_t from, std::string_view open,
                             size_t* end) {
  const size_t args = text.find(kArgsTag, from);
  if (args == std::string::npos)
    return nullptr;
  std::string_view head(text.data() + from, args - from), id;
  if (const size_t tag = head.find(kCallIdTag); tag != std::string_view::npos) {
    id = trim_space(head.substr(tag + std::string_view(kCallIdTag).size()));
    head = head.substr(0, tag);
  }
  const std::string_view name = trim_space(head);
  const size_t body = args + std::string_view(kArgsTag).size();
  const size_t next = text.find(open, body);
  *end = next == std::string::npos ? text.size() : next;
  const ordered_json a = ordered_json::parse(text.substr(body, *end - body), nullptr, false);
  if (name.empty() || a.is_discarded() || !a.is_object())
    return nullptr;
  ordered_json call = {{"name", std::string(name)}, {"arguments", a}};
  if (!id.empty())
    call["id"] = std::string(id);
  return call;
}

} // namespace

size_t find_call_open(const std::string& text, size_t from, const ToolFormat& format) {
  for (size_t at = from; at < text.size(); ++at)
    if (match_open(text, at, format) == OpenMatch::kWhole)
      return at;
  return std::string::npos;
}

ToolAnswer parse_tool_answer(const std::string& text, const std::string& id_prefix,
                             const ToolFormat& format, const StringArgs* string_args) {
  if (format.parse)
    return format.parse(text, id_prefix, string_args);
  if (format.xml)
    return xml_args_parse(text, id_prefix, format, string_args);
  ToolAnswer a;
  const std::string open_tag = format.call_open, close_tag = format.call_close;
  size_t open = find_call_open(text, 0, format);
  if (open == std::string::npos) {
    a.content = text;
    return a;
  }
  json calls = json::array();
  auto add_call = [&](const ordered_json& call) {
    if (!call.is_object() || !call.contains("name") || !call["name"].is_string())
      return false;
    const char* key = call.contains(format.args_key) ? format.args_key : "arguments";
    const ordered_json args = call.contains(key) ? call[key] : ordered_json::object();
    const auto id = call.find("id"); // the model's own (Mistral's), else ours
    calls.push_back(
        {{"id", format.calls_form != CallsForm::kObjects && id != call.end() && id->is_string()
                    ? id->get<std::string>()
                    : id_prefix + std::to_string(calls.size())},
         {"type", "function"},
         {"function",
          {{"name", call["name"].get<std::string>()},
           {"arguments", args.is_string() ? args.get<std::string>() : args.dump()}}}});
    return true;
  };
  if (format.calls_form == CallsForm::kNamedArgs) {
    for (size_t at = open; at != std::string::npos; at = find_call_open(text, at, format)) {
      if (!add_call(named_args_call(text, at + open_tag.size(), open_tag, &at)))
        break; // cut off (max_tokens) or not a call: what came before stays
    }
  } else if (format.calls_form == CallsForm::kArray) { // one array of calls, the rest
    const ordered_json array =
        ordered_json::parse(text.substr(open + open_tag.size()), nullptr, false);
    if (!array.is_discarded() && array.is_array() && !array.empty())
      for (const ordered_json& call : array)
        if (!add_call(call)) {
          calls = json::array(); // not calls after all: the answer is content
          break;
        }
  } else {
    for (size_t at = open; at != std::string::npos; at = find_call_open(text, at, format)) {
      // Wrapped: the JSON between the tags; else the object from its opening text to the end.
      const size_t body = close_tag.empty() ? at : at + open_tag.size();
      const size_t close = close_tag.empty() ? text.size() : text.find(close_tag, body);
      if (close == std::string::npos)
        break; // cut off (max_tokens): not a call
      const ordered_json call =
          ordered_json::parse(text.substr(body, close - body), nullptr, false);
      if (call.is_discarded() || !add_call(call))
        break;
      if (close_tag.empty())
        break; // one call, the rest of the answer
      at = close + close_tag.size();
    }
  }
  if (calls.empty()) {
    a.content = text;
    return a;
  }
  std::string content = text.substr(0, open);
  while (!content.empty() && is_space(content.back()))
    content.pop_back();
  a.content = content.empty() ? json(nullptr) : json(content);
  a.tool_calls = std::move(calls);
  return a;
}

size_t streamable_prefix(const std::string& text, const ToolFormat& format, size_t from) {
  for (size_t at = from; at < text.size(); ++at)
    if (match_open(text, at, format) != OpenMatch::kNo)
      return at; // a call, or what may become one
  return text.size();
}

ToolCallStream::Piece ToolCallStream::push(const std::string& text, bool last,
                                           const std::string& id_prefix) {
  text_ += text;
  Piece p;
  if (format_->streamable && !last) { // the format says what is content so far
    const auto [begin, end] = format_->streamable(text_);
    const size_t from = std::max(begin + sent_, begin);
    if (end > from) {
      p.content = text_.substr(from, end - from);
      sent_ += end - from;
    }
    send_calls(partial_calls(text_, *format_, id_prefix, 0, &string_args_), p);
    return p;
  }
  if (format_->streamable) { // sent_ counts the content sent
    ToolAnswer a = parse_tool_answer(text_, id_prefix, *format_, &string_args_);
    const std::string content = a.content.is_string() ? a.content.get<std::string>() : "";
    if (content.size() > sent_)
      p.content = content.substr(sent_);
    send_final(a.tool_calls, id_prefix, p);
    return p;
  }
  if (!last) {
    // Whitespace waits for what follows it: before a call, the content drops it.
    scanned_ = streamable_prefix(text_, *format_, scanned_);
    size_t upto = scanned_;
    while (upto > sent_ && is_space(text_[upto - 1]))
      --upto;
    if (upto > sent_)
      p.content = text_.substr(sent_, upto - sent_);
    sent_ = std::max(sent_, upto);
    if (scanned_ < text_.size()) // a call may have opened there
      send_calls(partial_calls(text_, *format_, id_prefix, scanned_, &string_args_), p);
    return p;
  }
  ToolAnswer a = parse_tool_answer(text_, id_prefix, *format_, &string_args_);
  const std::string content = a.tool_calls.empty()    ? text_
                              : a.content.is_string() ? a.content.get<std::string>()
                                                      : "";
  if (content.size() > sent_)
    p.content = content.substr(sent_);
  send_final(a.tool_calls, id_prefix, p);
  return p;
}

void ToolCallStream::send_final(json calls, const std::string& id_prefix, Piece& p) {
  // The calls streamed so far end as partial_calls has them (what was sent is a start of
  // that: all that came, for a call cut off); the others are sent whole, as parsed.
  const std::vector<PartialCall> streamed =
      partial_calls(text_, *format_, id_prefix, 0, &string_args_);
  std::vector<PartialCall> ends;
  for (size_t i = 0; i < std::max(calls.size(), std::min(streamed.size(), args_sent_.size()));
       ++i) {
    if (i >= calls.size() || (i < streamed.size() && streamed[i].whole)) {
      ends.push_back(streamed[i]);
      continue;
    }
    const json& f = calls[i]["function"];
    ends.push_back({calls[i]["id"].get<std::string>(), f["name"].get<std::string>(),
                    f["arguments"].get<std::string>(), true});
  }
  send_calls(ends, p);
  p.calls = std::move(calls);
}

void ToolCallStream::send_calls(const std::vector<PartialCall>& calls, Piece& p) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const PartialCall& c = calls[i];
    json delta = {{"index", i}};
    if (i == args_sent_.size()) { // its first delta: id, type and name
      args_sent_.emplace_back();
      delta["id"] = c.id;
      delta["type"] = "function";
      delta["function"] = {{"name", c.name}, {"arguments", ""}};
    }
    std::string& sent = args_sent_[i];
    // A call's arguments only grow; ones that do not start with what was sent (a parse
    // that rewrote them) add nothing.
    if (c.arguments.size() > sent.size() && c.arguments.compare(0, sent.size(), sent) == 0) {
      delta["function"]["arguments"] = c.arguments.substr(sent.size());
      sent = c.arguments;
    }
    if (delta.contains("function"))
      p.deltas.push_back(std::move(delta));
  }
}

} // namespace pshard::server
