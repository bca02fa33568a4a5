#include "tools/pshard-server/tool_calls.h"

#include "pshard/pshard.h"
#include "tools/pshard-server/structured_output.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The converted call schema's root, renamed under the wrapper rules below.
constexpr const char* kCallJson = "tool-call-json";

// "#/$defs/X..." of tool i's own schema, as a pointer into the combined schema's $defs.
std::string relocated_ref(const std::string& ref, const std::string& tool) {
  for (const char* defs : {"#/$defs/", "#/definitions/"})
    if (ref.rfind(defs, 0) == 0)
      return "#/$defs/" + tool + "-" + ref.substr(std::string(defs).size());
  if (ref == "#" || ref.rfind("#/", 0) == 0)
    return "#/$defs/" + tool + ref.substr(1);
  return ref; // not local: the converter refuses it, naming it
}

void relocate_refs(ordered_json& j, const std::string& tool) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string())
        value = relocated_ref(value.get<std::string>(), tool);
      else
        relocate_refs(value, tool);
    }
  } else if (j.is_array()) {
    for (auto& v : j)
      relocate_refs(v, tool);
  }
}

// One schema for every allowed call: {"name": <const>, "arguments": <that tool's
// parameters>}, each tool's parameters and definitions moved under $defs as "tool-I" and
// "tool-I-NAME" with their $refs rewritten to match.
ordered_json calls_schema(const std::vector<std::pair<std::string, ordered_json>>& tools,
                          const char* args_key, bool with_id) {
  ordered_json defs = ordered_json::object(), branches = ordered_json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string tool = "tool-" + std::to_string(i);
    ordered_json params = tools[i].second;
    for (const char* key : {"$defs", "definitions"})
      if (params.contains(key) && params[key].is_object()) {
        for (auto& [name, def] : params[key].items()) {
          ordered_json moved = def;
          relocate_refs(moved, tool);
          defs[tool + "-" + name] = std::move(moved);
        }
        params.erase(key);
      }
    relocate_refs(params, tool);
    defs[tool] = std::move(params);
    ordered_json branch = {
        {"type", "object"},
        {"properties",
         {{"name", {{"const", tools[i].first}}}, {args_key, {{"$ref", "#/$defs/" + tool}}}}},
        {"required", {"name", args_key}}};
    if (with_id) { // Mistral's: 9 letters and digits, after the arguments
      branch["properties"]["id"] = {{"type", "string"}, {"pattern", "^[a-zA-Z0-9]{9}$"}};
      branch["required"].push_back("id");
    }
    branches.push_back(std::move(branch));
  }
  return {{"anyOf", branches}, {"$defs", defs}};
}

// kNamedArgs: a call is the opening, the name, the model's optional id and [ARGS], then
// that tool's arguments.
FieldError named_args_grammar(const std::vector<std::pair<std::string, ordered_json>>& tools,
                              bool parallel, const ToolFormat& format, std::string& out) {
  std::string branches;
  if (FieldError e = per_tool_branches(tools, "tool-id " + gbnf_literal(kArgsTag), out, branches))
    return e;
  out += "root ::= tool-call" + std::string(parallel ? " ( tool-ws tool-call )*" : "") +
         "\ntool-call ::= " + gbnf_literal(format.call_open) + " ( " + branches + " )" +
         "\ntool-id ::= ( " + gbnf_literal(kCallIdTag) + " [a-zA-Z0-9]{9} )?";
  return std::nullopt;
}

// kHarmony: one call, its message's header after the recipient in any of the orders
// harmony allows (`to=functions.NAME <|constrain|>json<|message|>` after the channel, or
// `to=functions.NAME<|channel|>commentary json<|message|>` before it), then that tool's
// arguments. From the first token (`from_start`), the channel comes first.
FieldError harmony_grammar(const std::vector<std::pair<std::string, ordered_json>>& tools,
                           bool from_start, const ToolFormat& format, std::string& out) {
  std::string branches;
  if (FieldError e = per_tool_branches(tools, "tool-header \"<|message|>\"", out, branches))
    return e;
  out += std::string("root ::= ") + (from_start ? "\"<|channel|>commentary \" " : "") +
         gbnf_literal(format.call_open) + " ( " + branches + " )" +
         "\ntool-header ::= \"<|channel|>commentary\"? ( \" <|constrain|>json\" | \" json\" )?";
  return std::nullopt;
}

FieldError tool_grammar(const std::vector<std::pair<std::string, ordered_json>>& tools,
                        bool parallel, bool from_start, const ToolFormat& format,
                        std::string& out) {
  const bool array = format.calls_form == CallsForm::kArray;
  const bool wrapped = *format.call_close != '\0'; // else the call is its JSON object alone
  if (format.calls_form == CallsForm::kNamedArgs) {
    if (FieldError e = named_args_grammar(tools, parallel, format, out))
      return e;
  } else if (format.calls_form == CallsForm::kHarmony) {
    if (FieldError e = harmony_grammar(tools, from_start, format, out))
      return e;
  } else if (format.calls_form == CallsForm::kXmlArgs) {
    if (FieldError e = xml_args_grammar(tools, parallel, format, out))
      return e;
  } else if (format.calls_form == CallsForm::kSections) {
    if (FieldError e = sections_grammar(tools, parallel, format, out))
      return e;
  } else {
    std::string gbnf;
    if (FieldError e =
            schema_grammar(calls_schema(tools, format.args_key, array).dump(), "tools", gbnf))
      return e;
    out = rename_rule(gbnf, "root", kCallJson);
  }
  if (array) // the opening, then every call in one array
    out += "\nroot ::= " + gbnf_literal(format.call_open) + " tool-ws \"[\" tool-ws " + kCallJson +
           (parallel ? std::string(" ( tool-ws \",\" tool-ws ") + kCallJson + " )*" : "") +
           " tool-ws \"]\"";
  else if (format.calls_form == CallsForm::kObjects)
    out += "\nroot ::= tool-call" + std::string(parallel ? " ( tool-ws tool-call )*" : "") +
           "\ntool-call ::= " +
           (wrapped ? gbnf_literal(format.call_open) + " tool-ws " + kCallJson + " tool-ws " +
                          gbnf_literal(format.call_close)
                    : std::string(kCallJson));
  out += "\ntool-ws ::= [ \\t\\n]{0,4}\n";
  if (pshard_grammar_validate(out.c_str()) != PSHARD_OK)
    return bad_request(std::string("'tools' give a grammar pshard cannot follow: ") +
                           pshard_last_error(),
                       "tools", "invalid_json_schema");
  return std::nullopt;
}

bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64)
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

// The function the tool_choice names, "" for a string choice; `choice` the string.
FieldError read_tool_choice(const ordered_json& body, std::string& choice, std::string& named) {
  choice = "auto";
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  if (it->is_string()) {
    choice = it->get<std::string>();
    if (choice != "auto" && choice != "none" && choice != "required")
      return bad_request("'tool_choice' must be \"auto\", \"none\", \"required\" or "
                         "{\"type\": \"function\", \"function\": {\"name\": ...}}",
                         "tool_choice", "invalid_value");
    return std::nullopt;
  }
  // find(), not operator[]: a const object's operator[] on a missing key is undefined.
  const auto f = it->is_object() ? it->find("function") : it->end();
  const ordered_json* fn = f != it->end() ? &*f : nullptr;
  if (!fn || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string())
    return bad_request("'tool_choice' must name a function as {\"type\": \"function\", "
                       "\"function\": {\"name\": ...}}",
                       "tool_choice", "invalid_type");
  choice = "required";
  named = (*fn)["name"].get<std::string>();
  return std::nullopt;
}

} // namespace

FieldError per_tool_branches(const std::vector<std::pair<std::string, ordered_json>>& tools,
                             const std::string& between, std::string& out, std::string& branches) {
  for (size_t i = 0; i < tools.size(); ++i) {
    std::string gbnf;
    if (FieldError e = schema_grammar(tools[i].second.dump(), "tools", gbnf))
      return e;
    const std::string prefix = "tool-" + std::to_string(i) + "-";
    out += prefix_rules(gbnf, prefix) + "\n";
    branches += std::string(i ? " | " : "") + gbnf_literal(tools[i].first) + " " + between + " " +
                prefix + "root";
  }
  return std::nullopt;
}

FieldError read_tools(const ordered_json& body, const ToolFormat& format,
                      std::optional<ToolUse>& out) {
  out.reset();
  auto it = body.find("tools");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  if (format.not_built)
    return ApiError{400, "invalid_request_error",
                    std::string("'tools' is not supported with this model's chat template: its "
                                "function calling (") +
                        format.not_built +
                        ") is not implemented; ask without tools, or use a model whose template "
                        "pshard-server writes tools for (hermes, llama3-json, mistral, harmony)",
                    "tools", "unsupported_parameter"};
  if (!it->is_array() || it->empty())
    return bad_request("'tools' must be a non-empty array of {\"type\": \"function\", "
                       "\"function\": {\"name\", \"description\", \"parameters\"}}",
                       "tools", "invalid_type");
  std::vector<ordered_json> listed;
  std::vector<std::pair<std::string, ordered_json>> functions;
  for (size_t i = 0; i < it->size(); ++i) {
    const ordered_json& t = (*it)[i];
    const std::string param = "tools[" + std::to_string(i) + "]";
    if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") ||
        !t["function"].is_object())
      return bad_request("'" + param + "' must be {\"type\": \"function\", \"function\": {...}}",
                         param, "invalid_type");
    const ordered_json& f = t["function"];
    const std::string name = f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>()
                                                                          : "";
    if (!valid_function_name(name))
      return bad_request("'" + param + ".function.name' must be 1 to 64 letters, digits, '_' or "
                         "'-'",
                         param + ".function.name", "invalid_value");
    ordered_json params = f.contains("parameters") ? f["parameters"]
                                                   : ordered_json{{"type", "object"}};
    if (!params.is_object())
      return bad_request("'" + param + ".function.parameters' must be a JSON Schema object",
                         param + ".function.parameters", "invalid_type");
    ordered_json shown = {{"type", "function"}, {"function", f}};
    listed.push_back(std::move(shown));
    functions.emplace_back(name, std::move(params));
  }
  StringArgs string_args = string_arguments(functions);
  std::string choice, named;
  if (FieldError e = read_tool_choice(body, choice, named))
    return e;
  if (choice == "none")
    return std::nullopt;
  if (!named.empty()) {
    auto f = std::find_if(functions.begin(), functions.end(),
                          [&](const auto& fn) { return fn.first == named; });
    if (f == functions.end())
      return bad_request("'tool_choice' names \"" + named + "\", which 'tools' does not list",
                         "tool_choice", "invalid_value");
    functions = {*f};
  }
  bool parallel = true;
  if (auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean())
      return bad_request("'parallel_tool_calls' must be a boolean", "parallel_tool_calls",
                         "invalid_type");
    parallel = p->get<bool>();
  }
  ToolUse use;
  use.format = &format;
  use.string_args = std::move(string_args);
  use.tools_text = format.tools_text(listed);
  use.from_start = choice == "required";
  use.trigger = use.from_start ? "" : format.call_open;
  if (FieldError e = tool_grammar(functions, parallel && named.empty() && format.parallel,
                                  use.from_start, format, use.grammar))
    return e;
  out = std::move(use);
  return std::nullopt;
}

std::variant<std::pair<std::string, std::string>, ApiError>
tool_message(const json& m, std::string content, const std::string& param, const ToolFormat& format,
             CallNames* names) {
  const std::string role = m["role"].get<std::string>();
  if (role == "tool") {
    const auto id = m.find("tool_call_id");
    const std::string call_id = id != m.end() && id->is_string() ? id->get<std::string>() : "";
    std::string name = names ? names->of(call_id) : "";
    if (name.empty() && m.contains("name") && m["name"].is_string())
      name = m["name"].get<std::string>();
    return std::make_pair(std::string("tool"), format.result_text(content, call_id, name));
  }
  auto calls = m.find("tool_calls");
  if (role != "assistant" || calls == m.end() || calls->is_null())
    return std::make_pair(role, std::move(content));
  if (!calls->is_array())
    return bad_request("'" + param + ".tool_calls' must be an array", param + ".tool_calls",
                       "invalid_type");
  JsonList written;
  for (size_t k = 0; k < calls->size(); ++k) {
    const json& c = (*calls)[k];
    const std::string cp = param + ".tool_calls[" + std::to_string(k) + "]";
    const json* f = c.is_object() && c.contains("function") ? &c["function"] : nullptr;
    if (!f || !f->is_object() || !f->contains("name") || !(*f)["name"].is_string())
      return bad_request("'" + cp + "' must be {\"type\": \"function\", \"function\": {\"name\", "
                         "\"arguments\"}}",
                         cp, "invalid_type");
    ordered_json args = ordered_json::object();
    if (f->contains("arguments") && (*f)["arguments"].is_string()) {
      args = ordered_json::parse((*f)["arguments"].get<std::string>(), nullptr, false);
      if (args.is_discarded())
        return bad_request("'" + cp + ".function.arguments' must be a string of JSON",
                           cp + ".function.arguments", "invalid_value");
    }
    ordered_json call = {{"name", (*f)["name"]}, {format.args_key, args}};
    if (format.calls_form == CallsForm::kArray) // its calls carry ids (in calls_text's form)
      call["id"] =
          c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : std::to_string(k);
    if (format.calls_form == CallsForm::kSections) { // Kimi's template writes both as they are
      if (c.contains("id") && c["id"].is_string())
        call["id"] = c["id"];
      if (f->contains("arguments") && (*f)["arguments"].is_string())
        call[format.args_key] = (*f)["arguments"];
    }
    if (names)
      names->note(c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : "",
                  (*f)["name"].get<std::string>());
    written.push_back(std::move(call));
  }
  if (!written.empty() && format.calls_turn)
    return std::make_pair(std::string(format.text_role), format.calls_turn(content, written));
  if (!written.empty())
    content += (content.empty() ? "" : format.calls_after_text) + format.calls_text(written);
  return std::make_pair(role, std::move(content));
}

void place_tools(std::vector<std::pair<std::string, std::string>>& chat, const ToolUse* tools,
                 const ToolFormat& format) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [role, content] : chat) {
    if (format.join_results && role == "tool" && !out.empty() && out.back().first == "tool")
      out.back().second += format.results_between + content;
    else
      out.emplace_back(role, std::move(content));
  }
  for (auto& m : out)
    if (m.first == "tool")
      m.first = format.result_role;
  if (!tools) {
    chat = std::move(out);
    return;
  }
  auto system = [&]() -> std::string& {
    if (out.empty() || out.front().first != "system")
      out.insert(out.begin(), {"system", ""});
    return out.front().second;
  };
  if (*format.system_note)
    system().insert(0, format.system_note);
  auto is_user = [](const auto& m) { return m.first == "user"; };
  if (format.tools_at == ToolsAt::kFirstUser) {
    auto user = std::find_if(out.begin(), out.end(), is_user);
    if (user == out.end())
      out.emplace_back("user", tools->tools_text);
    else
      user->second.insert(0, tools->tools_text);
  } else if (format.tools_at == ToolsAt::kBeforeLastUser) {
    auto user = std::find_if(out.rbegin(), out.rend(), is_user).base(); // past the last one
    auto at = user == out.begin() ? out.end() : std::prev(user);        // the last user turn
    if (at != out.end() && at != out.begin() && std::prev(at)->first == "system")
      --at; // a system turn right before it opens the same [INST] block
    out.insert(at, {format.tools_role, tools->tools_text});
  } else if (format.tools_at == ToolsAt::kOwnFirstSystem) {
    out.insert(out.begin(), {*format.tools_role ? format.tools_role : "system", tools->tools_text});
  } else if (format.tools_at == ToolsAt::kDeveloper &&
             (out.empty() || out.front().first != "system")) {
    out.insert(out.begin(), {format.text_role, format.tools_turn(tools->tools_text)});
  } else if (format.tools_at == ToolsAt::kSystemFirst) {
    std::string& s = system();
    s = tools->tools_text + (s.empty() ? "" : "\n\n") + s;
  } else {
    std::string& s = system();
    if (s.empty())
      s = format.default_system;
    s += (s.empty() ? "" : "\n\n") + tools->tools_text;
  }
  chat = std::move(out);
}

namespace {

// Every rule name of `gbnf` mapped by `name`; literals, classes, repetition counts and
// comments are left alone.
template <typename Map> std::string map_rule_names(const std::string& gbnf, Map name) {
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  };
  std::string out;
  for (size_t i = 0; i < gbnf.size();) {
    const char c = gbnf[i];
    if (c == '"' || c == '[' || c == '{') { // a literal, class or count, escapes included
      const char end = c == '"' ? '"' : c == '[' ? ']' : '}';
      size_t j = i + 1;
      while (j < gbnf.size() && gbnf[j] != end)
        j += gbnf[j] == '\\' ? 2 : 1;
      out.append(gbnf, i, j + 1 - i);
      i = j + 1;
    } else if (c == '#') {
      const size_t j = gbnf.find('\n', i);
      out.append(gbnf, i, j == std::string::npos ? std::string::npos : j - i);
      i = j == std::string::npos ? gbnf.size() : j;
    } else if (name_char(c)) {
      size_t j = i;
      while (j < gbnf.size() && name_char(gbnf[j]))
        ++j;
      out += name(gbnf.substr(i, j - i));
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

} // namespace

std::string gbnf_literal(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string rename_rule(const std::string& gbnf, const std::string& from, const std::string& to) {
  return map_rule_names(gbnf, [&](const std::string& n) { return n == from ? to : n; });
}

std::string prefix_rules(const std::string& gbnf, const std::string& prefix) {
  return map_rule_names(gbnf, [&](const std::string& n) { return prefix + n; });
}

} // namespace pshard::server
