// OpenAI function calling (`tools`, `tool_choice`, assistant `tool_calls`, `tool` messages)
// in the Hermes format that Qwen2.5, Qwen3 and Hermes models are trained on:
//
//   - the tools are listed in the system message, each as one line of JSON inside
//     <tools></tools>, with the instruction to answer calls as
//     <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>;
//   - an earlier assistant call is rendered the same way, a tool's result as a user turn
//     <tool_response>\n...\n</tool_response> (consecutive results in one turn);
//   - the answer is read back: text before the first <tool_call> is the content, each
//     block a call (finish_reason "tool_calls").
//
// The calls are constrained by a grammar made from the tools' parameter schemas (the C
// API's pshard_json_schema_to_grammar), so a call, once begun, names a listed function
// with arguments its schema validates: tool_choice "auto" leaves the text free until
// "<tool_call>" (pshard_generate_params.grammar_trigger), "required" or a named function
// constrains from the first token, "none" lists no tools.
#pragma once

#include "tools/pshard-server/api_error.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pshard::server {

struct ToolUse {
  std::string system_text; // the tools block for the system message
  std::string grammar;     // GBNF of one or more calls
  bool from_start = false; // "required" / a named function: no trigger
};

inline constexpr const char* kToolCallOpen = "<tool_call>";

// `tools` and `tool_choice` from the body: nullopt when there are none or the choice is
// "none". Errors name the field (`tools[1].function.parameters`, ...).
FieldError read_tools(const nlohmann::ordered_json& body, std::optional<ToolUse>& out);

// One chat message as (role, content) for the template: assistant tool_calls appended as
// <tool_call> blocks, a `tool` message as a <tool_response> (its role "user"). `param`
// names the message in errors.
std::variant<std::pair<std::string, std::string>, ApiError>
tool_message(const nlohmann::json& message, std::string content, const std::string& param);

// Joins consecutive <tool_response> user turns into one, as the Hermes templates do, and
// puts the tools block into the system message (a new first message if there is none).
void place_tools(std::vector<std::pair<std::string, std::string>>& chat, const ToolUse* tools);

// An answer read back: the content before the first call (null when empty and there are
// calls) and OpenAI's tool_calls array (empty when none parsed).
struct ToolAnswer {
  nlohmann::json content;
  nlohmann::json tool_calls = nlohmann::json::array();
};
ToolAnswer parse_tool_answer(const std::string& text, const std::string& id_prefix);

// GBNF with every reference to (and the definition of) rule `from` named `to`; literals,
// classes and comments are left alone.
std::string rename_rule(const std::string& gbnf, const std::string& from, const std::string& to);

// While streaming: how much of the text so far may be sent as content — everything before
// a <tool_call> begins, holding back a tail that could be the start of one.
size_t streamable_prefix(const std::string& text);

// A streamed chat that offered tools: the content to send as it comes (never any of a
// call's text), and with the last text the calls, whole.
class ToolCallStream {
public:
  struct Piece {
    std::string content;
    nlohmann::json calls = nlohmann::json::array();
  };
  Piece push(const std::string& text, bool last, const std::string& id_prefix);

private:
  std::string text_;
  size_t sent_ = 0;
};

} // namespace pshard::server
