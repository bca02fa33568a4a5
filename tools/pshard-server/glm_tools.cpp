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
// <tool_response></tool_response> after one <|observation|> per run of them. The calls are
// written and read by xml_args.cpp from the markup here.
#include "tools/pshard-server/xml_args.h"

namespace pshard::server {
namespace {

using nlohmann::ordered_json;

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
  return xml_args_calls_text(kGlmXmlTools, calls);
}

std::string glm_result_text(const std::string& content, const std::string&, const std::string&) {
  return "<tool_response>\n" + content + "\n</tool_response>";
}

constexpr XmlArgsMarkup kGlmMarkup{.name_open = "",
                                   .name_close = "",
                                   .key_open = "<arg_key>",
                                   .key_close = "</arg_key>",
                                   .value_open = "<arg_value>",
                                   .value_close = "</arg_value>",
                                   .args_close = "",
                                   .value_in_newlines = false,
                                   .value_text = spaced_dump};

} // namespace

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
                              .xml = &kGlmMarkup};

} // namespace pshard::server
