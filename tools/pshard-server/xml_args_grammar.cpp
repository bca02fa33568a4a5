// The grammar of kXmlArgs's calls (tool_calls.h: xml_args_grammar), from the format's
// markup, apart from xml_args.cpp because it needs the JSON Schema converter (the C API),
// which reading answers does not.
#include "tools/pshard-server/structured_output.h"
#include "tools/pshard-server/tool_calls.h"
#include "tools/pshard-server/xml_args.h"

namespace pshard::server {
namespace {

using nlohmann::ordered_json;

// Text without the value's closing tag (`close`, a '<' and then none): runs of anything but
// '<', each '<' followed by a segment that does not begin the tag's rest (that rest holds no
// '<', so a segment is everything up to the next '<').
std::string xml_text_rules(std::string_view close) {
  const std::string_view kRest = close.substr(1);
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

// The value rule `rule` of a property (schema `prop` of `params`): a string raw (one of its
// enum or its const; up to maxLength characters, none of them '<', when it has a bound),
// else the JSON its schema allows.
FieldError value_rule(const ordered_json& prop, const ordered_json& params, const std::string& rule,
                      std::string& out) {
  const ordered_json& s = resolve_local_ref(prop, params);
  if (is_string_schema(s)) {
    std::string body = "xml-text";
    if (const auto c = s.find("const"); c != s.end() && c->is_string()) {
      body = gbnf_literal(c->get<std::string>());
    } else if (const auto e = s.find("enum"); e != s.end() && e->is_array()) {
      body.clear();
      for (const ordered_json& v : *e)
        if (v.is_string())
          body += (body.empty() ? "" : " | ") + gbnf_literal(v.get<std::string>());
    } else if (const auto n = s.find("maxLength");
               n != s.end() && n->is_number_unsigned() && n->get<uint64_t>() <= 1000) {
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
  const XmlArgsMarkup& m = *format.xml;
  const std::string key_close = std::string(m.key_close) + "\n" + std::string(m.value_open);
  const std::string value_close =
      (m.value_in_newlines ? "\n" : "") + std::string(m.value_close) + "\n";
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
        out += arg + " ::= " + gbnf_literal(std::string(m.key_open) + key + key_close) + " " + arg +
               "-value " + gbnf_literal(value_close) + "\n";
        const bool needed = std::find(required.begin(), required.end(), key) != required.end();
        args += " " + arg + (needed ? "" : "?");
      }
    } else { // no declared arguments: any keys (up to the key's close), raw values
      out += tool + "-arg ::= " + gbnf_literal(std::string(m.key_open)) + " [^" + m.key_close[0] +
             "\\n]+ " + gbnf_literal(key_close) + " xml-text " + gbnf_literal(value_close) + "\n";
      args = " " + tool + "-arg*";
    }
    const std::string args_close = m.args_close.empty() ? "" : std::string(m.args_close) + "\n";
    branches += std::string(i ? " | " : "") +
                gbnf_literal(tools[i].first + std::string(m.name_close) + "\n") + args +
                (args_close.empty() ? "" : " " + gbnf_literal(args_close));
  }
  const std::string name_open = m.name_open.empty() ? "" : "\n" + std::string(m.name_open);
  out += xml_text_rules(m.value_close);
  out += "root ::= tool-call" + std::string(parallel ? " ( \"\\n\" tool-call )*" : "") +
         "\ntool-call ::= " + gbnf_literal(format.call_open + name_open) + " ( " + branches +
         " ) " + gbnf_literal(format.call_close);
  return std::nullopt;
}

} // namespace pshard::server
