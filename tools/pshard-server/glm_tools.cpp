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
#include "tools/pshard-server/structured_output.h"
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

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t skip_space(const std::string& text, size_t at) {
  while (at < text.size() && is_space(text[at]))
    ++at;
  return at;
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
    c.arguments += (c.args.empty() ? "" : ",") + json(key).dump() + ":" + value.dump();
    c.args[key] = value;
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

// Text without "</arg_value>": runs of anything but '<', each '<' followed by a segment
// that does not begin "/arg_value>" (that string holds no '<', so a segment is everything up
// to the next '<').
std::string xml_text_rules() {
  constexpr std::string_view kRest = "/arg_value>";
  std::string g = "xml-text ::= [^<]* ( \"<\" xml-text-0 )*\n";
  for (size_t j = 0; j < kRest.size(); ++j) {
    const std::string here = "xml-text-" + std::to_string(j);
    g += here + " ::= \"\" | [^" + std::string(1, kRest[j]) + "<] [^<]*";
    if (j + 1 < kRest.size())
      g += " | " + gbnf_literal(std::string(1, kRest[j])) + " xml-text-" + std::to_string(j + 1);
    g += "\n";
  }
  return g;
}

// A property's schema with a local $ref ("#/$defs/NAME", "#/definitions/NAME") looked up
// once in the parameters' own definitions.
const ordered_json& resolved(const ordered_json& prop, const ordered_json& params) {
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

// The value rule `rule` of a property (schema `prop` of `params`): a string raw (one of its
// enum or its const; up to maxLength characters, none of them '<', when it has a bound),
// else the JSON its schema allows.
FieldError value_rule(const ordered_json& prop, const ordered_json& params, const std::string& rule,
                      std::string& out) {
  const ordered_json& s = resolved(prop, params);
  if (is_string_schema(s)) {
    std::string body = "xml-text";
    if (const auto c = s.find("const"); c != s.end() && c->is_string()) {
      body = gbnf_literal(c->get<std::string>());
    } else if (const auto e = s.find("enum"); e != s.end() && e->is_array()) {
      body.clear();
      for (const ordered_json& v : *e)
        if (v.is_string())
          body += (body.empty() ? "" : " | ") + gbnf_literal(v.get<std::string>());
    } else if (const auto n = s.find("maxLength"); n != s.end() && n->is_number_unsigned() &&
                                                    n->get<uint64_t>() <= 1000) {
      body = "[^<]{" + std::to_string(s.value("minLength", uint64_t{0})) + "," +
             std::to_string(n->get<uint64_t>()) + "}";
    }
    out += rule + " ::= " + body + "\n";
    return std::nullopt;
  }
  ordered_json schema = prop.is_object() ? prop : ordered_json::object();
  for (const char* defs : {"$defs", "definitions"})
    if (params.contains(defs))
      schema[defs] = params[defs];
  std::string gbnf;
  if (FieldError e = schema_grammar(schema.dump(), "tools", gbnf))
    return e;
  out += prefix_rules(gbnf, rule + "-") + "\n" + rule + " ::= " + rule + "-root\n";
  return std::nullopt;
}

} // namespace

FieldError xml_args_grammar(const std::vector<std::pair<std::string, ordered_json>>& tools,
                            bool parallel, const ToolFormat& format, std::string& out) {
  std::string branches;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string tool = "tool-" + std::to_string(i);
    const ordered_json& params = tools[i].second;
    const auto props = params.find("properties");
    std::string args; // the arguments in the schema's order, each once, the required ones
    if (props != params.end() && props->is_object() && !props->empty()) {
      const ordered_json required = params.value("required", ordered_json::array());
      size_t j = 0;
      for (const auto& [key, prop] : props->items()) {
        const std::string arg = tool + "-a" + std::to_string(j++);
        if (FieldError e = value_rule(prop, params, arg + "-value", out))
          return e;
        out += arg + " ::= " + gbnf_literal(std::string(kKey) + key + std::string(kKeyEnd) + "\n" +
                                            std::string(kValue)) +
               " " + arg + "-value " + gbnf_literal(std::string(kValueEnd) + "\n") + "\n";
        const bool needed = std::find(required.begin(), required.end(), key) != required.end();
        args += " " + arg + (needed ? "" : "?");
      }
    } else { // no declared arguments: any keys, raw values
      out += tool + "-arg ::= " +
             gbnf_literal(std::string(kKey)) + " [^<\\n]+ " +
             gbnf_literal(std::string(kKeyEnd) + "\n" + std::string(kValue)) + " xml-text " +
             gbnf_literal(std::string(kValueEnd) + "\n") + "\n";
      args = " " + tool + "-arg*";
    }
    branches += std::string(i ? " | " : "") + gbnf_literal(tools[i].first + "\n") + args;
  }
  out += xml_text_rules();
  out += "root ::= tool-call" + std::string(parallel ? " ( \"\\n\" tool-call )*" : "") +
         "\ntool-call ::= " + gbnf_literal(format.call_open) + " ( " + branches + " ) " +
         gbnf_literal(format.call_close);
  return std::nullopt;
}

StringArgs string_arguments(const std::vector<std::pair<std::string, ordered_json>>& tools) {
  StringArgs out;
  for (const auto& [name, params] : tools) {
    std::set<std::string>& keys = out[name];
    const auto props = params.find("properties");
    if (props != params.end() && props->is_object())
      for (const auto& [key, prop] : props->items())
        if (is_string_schema(resolved(prop, params)))
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
