// The calls of an answer still being written (partial_calls, tool_calls.h): each call's
// name as soon as it is whole and its arguments' JSON as far as it has come, so a stream
// can send a call's arguments piece by piece, as OpenAI's streams do.
#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/tool_calls.h"
#include "tools/pshard-server/xml_args.h"

#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;

// The JSON value at t[from]: where it ends (one past), or npos when the text ends first;
// `minified` gets its text so far without the whitespace outside strings.
size_t scan_value(const std::string& t, size_t from, std::string* minified) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = from; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      minified->push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0)
          return i + 1;
      }
      continue;
    }
    if (is_space(c) || (depth == 0 && i > from && (c == ',' || c == '}' || c == ']'))) {
      if (depth == 0 && i > from) // a number, true, false or null ends here
        return i;
      continue;
    }
    minified->push_back(c);
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

// The call object at t[at] ('{'): its "name" once whole (*named: it is; "" is a name the
// answer read back keeps), its `args_key` value so far. Returns where the object ends, or
// npos while it is open.
size_t scan_call_object(const std::string& t, size_t at, const char* args_key, PartialCall* call,
                        bool* named) {
  size_t i = at + 1;
  while (true) {
    i = skip_space(t, i);
    if (i < t.size() && t[i] == ',')
      i = skip_space(t, i + 1);
    if (i >= t.size())
      return std::string::npos;
    if (t[i] == '}')
      return i + 1;
    std::string key_text;
    const size_t key_end = scan_value(t, i, &key_text);
    if (key_end == std::string::npos || t[i] != '"')
      return std::string::npos;
    const json key = json::parse(key_text, nullptr, false);
    i = skip_space(t, key_end);
    if (i >= t.size() || t[i] != ':')
      return std::string::npos;
    i = skip_space(t, i + 1);
    if (i >= t.size())
      return std::string::npos;
    std::string value;
    const size_t end = scan_value(t, i, &value);
    const bool is_args = key == args_key && t[i] == '{';
    if (is_args) {
      call->arguments = value;
      call->whole = end != std::string::npos;
    } else if (key == "name" && end != std::string::npos && t[i] == '"') {
      const json name = json::parse(value, nullptr, false);
      if (name.is_string()) {
        call->name = name.get<std::string>();
        *named = true;
      }
    }
    if (end == std::string::npos)
      return std::string::npos;
    i = end;
  }
}

// kObjects: each call a JSON object, after the opening tag (wrapped) or starting with it.
std::vector<PartialCall> object_calls(const std::string& text, const ToolFormat& format,
                                      const std::string& id_prefix, size_t from) {
  std::vector<PartialCall> calls;
  const std::string_view open = format.call_open, close = format.call_close;
  for (size_t at = find_call_open(text, from, format); at != std::string::npos;) {
    const size_t object = close.empty() ? at : skip_space(text, at + open.size());
    if (object >= text.size() || text[object] != '{')
      break;
    PartialCall call;
    call.id = id_prefix + std::to_string(calls.size());
    bool named = false;
    const size_t end = scan_call_object(text, object, format.args_key, &call, &named);
    if (!named)
      break; // not known yet: nothing of this call is sent
    calls.push_back(std::move(call));
    if (end == std::string::npos || close.empty())
      break;
    const size_t closed = text.find(close, end);
    if (closed == std::string::npos)
      break;
    at = find_call_open(text, closed + close.size(), format);
  }
  return calls;
}

// kNamedArgs: NAME [CALL_ID]ID (optional) [ARGS] {arguments}, one after another.
std::vector<PartialCall> named_args_calls(const std::string& text, const ToolFormat& format,
                                          const std::string& id_prefix, size_t from) {
  std::vector<PartialCall> calls;
  const std::string_view open = format.call_open, args_tag = kArgsTag, id_tag = kCallIdTag;
  for (size_t at = find_call_open(text, from, format); at != std::string::npos;) {
    const size_t from = at + open.size(), args = text.find(args_tag, from);
    if (args == std::string::npos)
      break; // the name may not be whole yet
    std::string_view head(text.data() + from, args - from), id;
    if (const size_t tag = head.find(id_tag); tag != std::string_view::npos) {
      id = head.substr(tag + id_tag.size());
      head = head.substr(0, tag);
    }
    PartialCall call;
    call.name = trim_space(head);
    call.id = trim_space(id).empty() ? id_prefix + std::to_string(calls.size())
                                     : std::string(trim_space(id));
    const size_t body = skip_space(text, args + args_tag.size());
    if (call.name.empty() || (body < text.size() && text[body] != '{'))
      break;
    const size_t end = body < text.size() ? scan_value(text, body, &call.arguments)
                                          : std::string::npos;
    call.whole = end != std::string::npos;
    calls.push_back(std::move(call));
    if (end == std::string::npos)
      break;
    at = find_call_open(text, end, format);
  }
  return calls;
}

} // namespace

size_t scan_json_value(const std::string& text, size_t from, std::string* minified) {
  return scan_value(text, from, minified);
}

std::vector<PartialCall> partial_calls(const std::string& text, const ToolFormat& format,
                                       const std::string& id_prefix, size_t from,
                                       const StringArgs* string_args) {
  if (format.partial)
    return format.partial(text, id_prefix, string_args);
  if (format.xml)
    return xml_args_partial(text, id_prefix, format, string_args);
  switch (format.calls_form) {
  case CallsForm::kObjects:
    return object_calls(text, format, id_prefix, from);
  case CallsForm::kNamedArgs:
    return named_args_calls(text, format, id_prefix, from);
  default: // kArray: each call's id follows its arguments; the calls go whole at the end
    return {};
  }
}

} // namespace pshard::server
