// Qwen3-Coder's and Qwen3.5's function calling, as their published chat templates write it
// (llama.cpp's models/templates/Qwen3-Coder.jinja and Qwen3.5-4B.jinja). A call is
//
//   <tool_call>
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   </function>
//   </tool_call>
//
// a string argument raw, any other value as the template's `| string` (Python's str():
// True, None, {'a': 1}) or, Qwen3.5's lists and objects, `| tojson`. The calls are written and
// read by xml_args.cpp from the markup here; what differs is where the tools go and how.
#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/xml_args.h"

#include <cstdio>

namespace pshard::server {
namespace {

using nlohmann::ordered_json;

constexpr const char* kCallInstruction =
    "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:"
    "\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\n"
    "value_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second "
    "parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n"
    "<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner "
    "<function=...></function> block must be nested within <tool_call></tool_call> XML tags\n"
    "- Required parameters MUST be specified\n- You may provide optional reasoning for your "
    "function call in natural language BEFORE the function call, but NOT after\n- If there is "
    "no function call available, answer the question like normal with your current knowledge "
    "and do not tell the user about function calls\n</IMPORTANT>";

// Python's repr() of a string: single quotes unless it holds one and no double quote.
std::string python_repr(const std::string& s) {
  const char quote =
      s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '\\' || ch == quote) {
      out += '\\';
      out += ch;
    } else if (ch == '\n' || ch == '\r' || ch == '\t') {
      out += ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out + quote;
}

// Python's str() of a JSON value as Jinja's `| string` writes it: a string as it is, inside
// lists and dicts its repr().
std::string python_str(const ordered_json& v, bool nested = false) {
  if (v.is_string())
    return nested ? python_repr(v.get<std::string>()) : v.get<std::string>();
  if (v.is_boolean())
    return v.get<bool>() ? "True" : "False";
  if (v.is_null())
    return "None";
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + python_str(v[i], true);
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    for (auto it = v.begin(); it != v.end(); ++it)
      s += (it == v.begin() ? "" : ", ") + python_repr(it.key()) + ": " +
           python_str(it.value(), true);
    return s + "}";
  }
  return v.dump();
}

std::string coder_value_text(const ordered_json& v) { return python_str(v); }

std::string qwen35_value_text(const ordered_json& v) {
  return v.is_object() || v.is_array() ? spaced_dump(v) : python_str(v);
}

// The template's render_item_list: "\n<required>[`a`, `b`]</required>" (nothing for none).
std::string item_list(const ordered_json& items, const char* tag) {
  if (!items.is_array() || items.empty())
    return "";
  std::string s = std::string("\n<") + tag + ">[";
  for (size_t i = 0; i < items.size(); ++i)
    s += (i ? ", " : "") +
         (items[i].is_string() ? "`" + items[i].get<std::string>() + "`" : python_str(items[i]));
  return s + "]</" + tag + ">";
}

// The template's `| trim` of a field (nothing for none).
std::string trimmed(const ordered_json& v) {
  if (!v.is_string())
    return v.is_null() ? "" : python_str(v);
  return std::string(trim_space(v.get_ref<const std::string&>()));
}

// A parameter's keys past name, type and description, each an element of its own (its
// name with '-' and ' ' made '_' and '$' dropped): objects as JSON, the rest by str().
std::string extra_keys(const ordered_json& fields) {
  std::string s;
  for (const auto& [key, value] : fields.items()) {
    if (key.empty() || key == "type" || key == "description" || key == "enum" ||
        key == "required" || value.is_null())
      continue;
    std::string tag;
    for (const char c : key)
      if (c != '$')
        tag += c == '-' || c == ' ' ? '_' : c;
    s += "\n<" + tag + ">" + (value.is_object() ? spaced_dump(value) : python_str(value)) + "</" +
         tag + ">";
  }
  return s;
}

// Qwen3-Coder's tools block: each function in XML, its parameters one element each.
std::string coder_tools_text(const JsonList& tools) {
  std::string s = "You have access to the following functions:\n\n<tools>";
  for (const ordered_json& tool : tools) {
    const ordered_json& f = tool.contains("function") ? tool["function"] : tool;
    const ordered_json params = f.value("parameters", ordered_json::object());
    s += "\n<function>\n<name>" + f.value("name", "") + "</name>\n<description>" +
         trimmed(f.value("description", ordered_json())) + "</description>\n<parameters>";
    if (params.contains("properties") && params["properties"].is_object())
      for (const auto& [name, fields] : params["properties"].items()) {
        s += "\n<parameter>\n<name>" + name + "</name>";
        if (fields.is_object()) {
          if (fields.contains("type"))
            s += "\n<type>" + python_str(fields["type"]) + "</type>";
          if (fields.contains("description"))
            s += "\n<description>" + trimmed(fields["description"]) + "</description>";
          s += extra_keys(fields) + item_list(fields.value("required", ordered_json()), "required");
        }
        s += "\n</parameter>";
      }
    s += item_list(params.value("required", ordered_json()), "required") + "\n</parameters>";
    if (f.contains("return"))
      s += "\n<return>" +
           (f["return"].is_object() ? spaced_dump(f["return"]) : python_str(f["return"])) +
           "</return>";
    s += "\n</function>";
  }
  return s + "\n</tools>" + kCallInstruction;
}

// Qwen3.5's: each tool one JSON line, as the client sent it.
std::string qwen35_tools_text(const JsonList& tools) {
  std::string s = "# Tools\n\nYou have access to the following functions:\n\n<tools>";
  for (const ordered_json& t : tools)
    s += "\n" + spaced_dump(t);
  return s + "\n</tools>" + kCallInstruction;
}

std::string coder_calls_text(const JsonList& calls) {
  return xml_args_calls_text(kQwen3CoderTools, calls);
}
std::string qwen35_calls_text(const JsonList& calls) {
  return xml_args_calls_text(kQwen35Tools, calls);
}

// Each result its own element; Qwen3-Coder's end in a newline and are joined by none.
std::string coder_result_text(const std::string& content, const std::string&, const std::string&) {
  return "<tool_response>\n" + content + "\n</tool_response>\n";
}
std::string qwen35_result_text(const std::string& content, const std::string&, const std::string&) {
  return "<tool_response>\n" + content + "\n</tool_response>";
}

constexpr XmlArgsMarkup kCoderMarkup{.name_open = "<function=",
                                     .name_close = ">",
                                     .key_open = "<parameter=",
                                     .key_close = ">",
                                     .value_open = "",
                                     .value_close = "</parameter>",
                                     .args_close = "</function>",
                                     .value_in_newlines = true,
                                     .value_text = coder_value_text};
constexpr XmlArgsMarkup kQwen35Markup = [] {
  XmlArgsMarkup m = kCoderMarkup;
  m.value_text = qwen35_value_text;
  return m;
}();

} // namespace

const ToolFormat kQwen3CoderTools{
    .name = "qwen3-coder",
    .call_open = "<tool_call>",
    .call_close = "</tool_call>",
    .args_key = "arguments",
    .parallel = true,
    .calls_form = CallsForm::kXmlArgs,
    .tools_at = ToolsAt::kSystem,
    .tools_role = "",
    .system_note = "",
    .result_role = "user",
    .join_results = true,
    .tools_text = coder_tools_text,
    .calls_text = coder_calls_text,
    .result_text = coder_result_text,
    .xml = &kCoderMarkup,
    .calls_after_text = "\n\n",
    .results_between = "",
    .default_system =
        "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks."};

const ToolFormat kQwen35Tools{.name = "qwen3.5",
                              .call_open = "<tool_call>",
                              .call_close = "</tool_call>",
                              .args_key = "arguments",
                              .parallel = true,
                              .calls_form = CallsForm::kXmlArgs,
                              .tools_at = ToolsAt::kSystemFirst,
                              .tools_role = "",
                              .system_note = "",
                              .result_role = "user",
                              .join_results = true,
                              .tools_text = qwen35_tools_text,
                              .calls_text = qwen35_calls_text,
                              .result_text = qwen35_result_text,
                              .xml = &kQwen35Markup,
                              .calls_after_text = "\n\n",
                              .keeps_recent_thoughts = true};

} // namespace pshard::server
