#include "tools/pshard-server/tool_format.h"

namespace pshard::server {
namespace {

using nlohmann::ordered_json;

std::string hermes_tools_text(const std::vector<ordered_json>& tools) {
  std::string s = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                  "You are provided with function signatures within <tools></tools> XML tags:\n"
                  "<tools>";
  for (const ordered_json& t : tools)
    s += "\n" + t.dump();
  s += "\n</tools>\n\nFor each function call, return a json object with function name and "
       "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
       "<function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
  return s;
}

// Meta's Llama 3.1 template, tools in the user message, word for word (its missing space
// after "value}." included: the models were trained on that text).
std::string llama3_tools_text(const std::vector<ordered_json>& tools) {
  std::string s = "Given the following functions, please respond with a JSON for a function "
                  "call with its proper arguments that best answers the given prompt.\n\n"
                  "Respond in the format {\"name\": function name, \"parameters\": dictionary "
                  "of argument name and its value}.Do not use variables.\n\n";
  for (const ordered_json& t : tools)
    s += t.dump(4) + "\n\n";
  return s;
}

} // namespace

const ToolFormat kHermesTools{"hermes",
                              "<tool_call>",
                              "</tool_call>",
                              "arguments",
                              /*parallel=*/true,
                              /*tools_in_user=*/false,
                              "",
                              "user",
                              "<tool_response>\n",
                              "\n</tool_response>",
                              /*join_results=*/true,
                              hermes_tools_text};

const ToolFormat kLlama3JsonTools{"llama3-json",
                                  "{\"name\"",
                                  "",
                                  "parameters",
                                  /*parallel=*/false,
                                  /*tools_in_user=*/true,
                                  "Environment: ipython\n",
                                  "ipython",
                                  "",
                                  "",
                                  /*join_results=*/false,
                                  llama3_tools_text};

const ToolFormat& tool_format_for(std::string_view chat_template) {
  return chat_template == "llama3" ? kLlama3JsonTools : kHermesTools;
}

} // namespace pshard::server
