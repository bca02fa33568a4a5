// How a model family writes function calls, picked by the chat template in use:
//
//   hermes       (Qwen2.5, Qwen3, Hermes, and every template but llama3): the tools in
//                the system message inside <tools></tools>; a call is
//                <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, several a
//                turn; results are user turns inside <tool_response></tool_response>.
//   llama3-json  (Llama 3.1, 3.2, 3.3: Meta's JSON-based tool calling): "Environment:
//                ipython" in the system message and the tools, one JSON object each,
//                before the first user message's text; a call is the answer's JSON object
//                {"name": ..., "parameters": {...}}, one a turn; results are `ipython` turns.
//
// Everything format-specific is data here; tool_calls.h does the rest the same way for all.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace pshard::server {

struct ToolFormat {
  const char* name;
  const char* call_open;   // a call begins with this text: tool_choice "auto"'s trigger
  const char* call_close;  // and ends with this ("": with its JSON object)
  const char* args_key;    // the call object's arguments: "arguments" or "parameters"
  bool parallel;           // several calls in one answer
  bool tools_in_user;      // the tools block before the first user message's text (else
                           // appended to the system message)
  const char* system_note; // put first in the system message when tools are offered
  const char* result_role; // the role a tool result is rendered under
  const char *result_open, *result_close; // around its text
  bool join_results;                      // consecutive results in one turn
  std::string (*tools_text)(const std::vector<nlohmann::ordered_json>& tools);
};

extern const ToolFormat kHermesTools;
extern const ToolFormat kLlama3JsonTools;

// The format of a chat template (pshard_chat_builtin_templates' names): llama3 ->
// llama3-json, anything else -> hermes.
const ToolFormat& tool_format_for(std::string_view chat_template);

} // namespace pshard::server
