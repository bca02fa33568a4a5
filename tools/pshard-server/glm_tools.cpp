// GLM-4.5's function calling (glm-4.5 template: GLM-4.5, -Air, 4.6), as its published
// chat template writes it: the tools one JSON line each inside <tools></tools> in a system
// turn of their own, with the template's instruction; a call
//
//   <tool_call>get_weather
//   <arg_key>city</arg_key>
//   <arg_value>Paris</arg_value>
//   </tool_call>
//
// (a string argument raw, any other value JSON), several one after another; results inside
// <tool_response></tool_response> after one <|observation|> per run of them.
#include "tools/pshard-server/glm_schema.h"
#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/tool_calls.h"

#include <algorithm>
#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";
constexpr std::string_view kKey = "<arg_key>", kKeyEnd = "</arg_key>";
constexpr std::string_view kValue = "<arg_value>", kValueEnd = "</arg_value>";

std::string glm_tools_text(const JsonList& tools) {
  std::string s = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                  "You are provided with function signatures within <tools></tools> XML tags:\n"
                  "<tools>\n";
  for (const ordered_json& t : tools)
    s += spaced_dump(t) + "\n";
  s += "</tools>\n\nFor each function call, output the function name and arguments within the "
       "following XML format:\n<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n"
       "<arg_value>{arg-value-1}</arg_value>\n<arg_key>{arg-key-2}</arg_key>\n"
       "<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";
  return s;
}

std::string glm_calls_text(const JsonList& calls) {
  std::string s;
  for (const ordered_json& c : calls) {
    s += std::string(s.empty() ? "" : "\n") + std::string(kOpen) + c.value("name", "") + "\n";
    const auto args = c.find("arguments");
    if (args != c.end() && args->is_object())
      for (const auto& [key, value] : args->items())
        s += std::string(kKey) + key + std::string(kKeyEnd) + "\n" + std::string(kValue) +
             (value.is_string() ? value.get<std::string>() : spaced_dump(value)) +
             std::string(kValueEnd) + "\n";
    s += kClose;
  }
  return s;
}

std::string glm_result_text(const std::string& content, const std::string&, const std::string&) {
  return "<tool_response>\n" + content + "\n</tool_response>";
}

bool starts_at(const std::string& text, size_t at, std::string_view s) {
  return text.compare(at, s.size(), s) == 0;
}

// A value as the call's argument: raw text for a string argument, else the JSON it spells
// (text that is no JSON stays a string: a function whose schema is not known).
ordered_json argument_value(const std::string& raw, const std::set<std::string>* strings,
                            const std::string& key) {
  if (strings && strings->count(key))
    return raw;
  ordered_json v = ordered_json::parse(raw, nullptr, false);
  return v.is_discarded() ? ordered_json(raw) : v;
}

// One call whose name starts at text[at]: its name, its arguments' JSON as far as whole
// pairs have come (no closing brace), whether it is whole, and where it ends.
struct ReadCall {
  std::string name;
  std::string arguments = "{";
  ordered_json args = ordered_json::object();
  bool named = false, whole = false;
  size_t end = std::string::npos;
};

ReadCall read_call(const std::string& text, size_t at, const StringArgs* string_args) {
  ReadCall c;
  size_t name_end = at;
  while (name_end < text.size() && text[name_end] != '\n' && text[name_end] != '<')
    ++name_end;
  if (name_end == text.size())
    return c; // the name may still grow
  c.name = std::string(text.substr(at, name_end - at));
  while (!c.name.empty() && is_space(c.name.back()))
    c.name.pop_back();
  c.named = !c.name.empty();
  const std::set<std::string>* strings = nullptr;
  if (string_args)
    if (auto it = string_args->find(c.name); it != string_args->end())
      strings = &it->second;
  size_t p = skip_space(text, name_end);
  while (starts_at(text, p, kKey)) {
    const size_t key_end = text.find(kKeyEnd, p + kKey.size());
    if (key_end == std::string::npos)
      return c;
    const std::string key = text.substr(p + kKey.size(), key_end - p - kKey.size());
    const size_t v = skip_space(text, key_end + kKeyEnd.size());
    if (!starts_at(text, v, kValue))
      return c;
    const size_t value_end = text.find(kValueEnd, v + kValue.size());
    if (value_end == std::string::npos)
      return c;
    const ordered_json value =
        argument_value(text.substr(v + kValue.size(), value_end - v - kValue.size()), strings, key);
    if (!c.args.contains(key)) { // a key said twice keeps its first value, streamed or not
      c.arguments += (c.args.empty() ? "" : ",") + json(key).dump() + ":" + value.dump();
      c.args[key] = value;
    }
    p = skip_space(text, value_end + kValueEnd.size());
  }
  if (starts_at(text, p, kClose)) {
    c.whole = true;
    c.arguments += "}";
    c.end = p + kClose.size();
  }
  return c;
}

ToolAnswer glm_parse(const std::string& text, const std::string& id_prefix,
                     const StringArgs* string_args) {
  ToolAnswer a;
  const size_t first = text.find(kOpen);
  for (size_t at = first; at != std::string::npos; at = text.find(kOpen, at)) {
    const ReadCall c = read_call(text, at + kOpen.size(), string_args);
    if (!c.named || !c.whole)
      break; // cut off (max_tokens) or not a call: what came before stays
    a.tool_calls.push_back({{"id", id_prefix + std::to_string(a.tool_calls.size())},
                            {"type", "function"},
                            {"function", {{"name", c.name}, {"arguments", c.args.dump()}}}});
    at = c.end;
  }
  if (a.tool_calls.empty()) {
    a.content = text;
    return a;
  }
  std::string content = text.substr(0, first);
  while (!content.empty() && is_space(content.back()))
    content.pop_back();
  a.content = content.empty() ? json(nullptr) : json(content);
  return a;
}

// The calls so far: each whose name is whole, its arguments as far as whole pairs go.
std::vector<PartialCall> glm_partial(const std::string& text, const std::string& id_prefix,
                                     const StringArgs* string_args) {
  std::vector<PartialCall> calls;
  for (size_t at = text.find(kOpen); at != std::string::npos; at = text.find(kOpen, at)) {
    const ReadCall c = read_call(text, at + kOpen.size(), string_args);
    if (!c.named)
      break;
    calls.push_back({id_prefix + std::to_string(calls.size()), c.name, c.arguments, c.whole});
    if (!c.whole)
      break;
    at = c.end;
  }
  return calls;
}

} // namespace

// A property's schema with a local $ref ("#/$defs/NAME", "#/definitions/NAME") looked up
// once in the parameters' own definitions.
const ordered_json& resolve_local_ref(const ordered_json& prop, const ordered_json& params) {
  const auto ref = prop.is_object() ? prop.find("$ref") : prop.end();
  if (ref == prop.end() || !ref->is_string())
    return prop;
  const std::string r = ref->get<std::string>();
  for (const char* defs : {"$defs", "definitions"}) {
    const std::string prefix = std::string("#/") + defs + "/";
    if (r.rfind(prefix, 0) == 0 && params.contains(defs) && params[defs].is_object() &&
        params[defs].contains(r.substr(prefix.size())))
      return params[defs][r.substr(prefix.size())];
  }
  return prop;
}

// Whether GLM writes a value of this schema raw: a string, or one of strings (enum, const).
bool is_string_schema(const ordered_json& s) {
  if (!s.is_object())
    return false;
  if (s.value("type", ordered_json()) == "string")
    return true;
  if (const auto c = s.find("const"); c != s.end())
    return c->is_string();
  const auto e = s.find("enum");
  return e != s.end() && e->is_array() && !e->empty() &&
         std::all_of(e->begin(), e->end(), [](const ordered_json& v) { return v.is_string(); });
}

StringArgs string_arguments(const std::vector<std::pair<std::string, ordered_json>>& tools) {
  StringArgs out;
  for (const auto& [name, params] : tools) {
    std::set<std::string>& keys = out[name];
    const auto props = params.find("properties");
    if (props != params.end() && props->is_object())
      for (const auto& [key, prop] : props->items())
        if (is_string_schema(resolve_local_ref(prop, params)))
          keys.insert(key);
  }
  return out;
}

const ToolFormat kGlmXmlTools{.name = "glm-xml",
                              .call_open = "<tool_call>",
                              .call_close = "</tool_call>",
                              .args_key = "arguments",
                              .parallel = true,
                              .calls_form = CallsForm::kXmlArgs,
                              .tools_at = ToolsAt::kOwnFirstSystem,
                              .tools_role = "",
                              .system_note = "",
                              .result_role = "observation",
                              .join_results = true,
                              .tools_text = glm_tools_text,
                              .calls_text = glm_calls_text,
                              .result_text = glm_result_text,
                              .parse = glm_parse,
                              .partial = glm_partial};

} // namespace pshard::server
