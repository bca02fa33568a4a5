// OpenAI function calling (`tools`, `tool_choice`, assistant `tool_calls`, `tool` messages)
// in the format the model was trained on (tool_format.h: Hermes for Qwen2.5, Qwen3 and
// Hermes models, Meta's JSON calls for Llama 3.x, Mistral's):
//
//   - the tools are listed where the format puts them, with its instruction to answer
//     calls in its shape;
//   - an earlier assistant call is rendered the same way, a tool's result as the format's
//     result turn;
//   - the answer is read back: text before the first call is the content, each call an
//     entry of tool_calls (finish_reason "tool_calls").
//
// The calls are constrained by a grammar made from the tools' parameter schemas (the C
// API's pshard_json_schema_to_grammar), so a call, once begun, names a listed function
// with arguments its schema validates: tool_choice "auto" leaves the text free until
// the format's call opening (pshard_generate_params.grammar_trigger), "required" or a named
// function constrains from the first token, "none" lists no tools.
#pragma once

#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/tool_format.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pshard::server {

struct ToolUse {
  const ToolFormat* format = &kHermesTools;
  std::string tools_text;  // the tools block (where it goes: the format's)
  std::string grammar;     // GBNF of one or more calls
  bool from_start = false; // "required" / a named function: no trigger
  std::string trigger;     // else the text that starts the grammar (the format's call_open)
  // The answer's reasoning is taken out of it (reasoning.h) and calls are parsed from the
  // rest: a trigger inside the thought does not start the grammar either.
  bool skip_thought = false;
  StringArgs string_args; // the offered functions' string arguments (kXmlArgs writes them raw)
};

// `tools` and `tool_choice` from the body: nullopt when there are none or the choice is
// "none". Errors name the field (`tools[1].function.parameters`, ...).
FieldError read_tools(const nlohmann::ordered_json& body, const ToolFormat& format,
                      std::optional<ToolUse>& out);

// The functions a conversation's calls named, by call id: a result names its function in
// harmony, and OpenAI's `tool` message gives only the id (else the latest call's).
struct CallNames {
  std::map<std::string, std::string> by_id;
  std::string latest;
  void note(const std::string& id, const std::string& name) {
    if (!id.empty())
      by_id[id] = name;
    latest = name;
  }
  std::string of(const std::string& id) const {
    const auto it = by_id.find(id);
    return it != by_id.end() ? it->second : latest;
  }
};

// One chat message as (role, content) for the template: assistant tool_calls appended as
// the format writes calls (or, harmony, the whole turn under its text role), a `tool`
// message wrapped as its results are (role "tool" until place_tools). `param` names the
// message in errors; `names` (one per conversation, in message order) carries the calls'
// functions to their results.
std::variant<std::pair<std::string, std::string>, ApiError>
tool_message(const nlohmann::json& message, std::string content, const std::string& param,
             const ToolFormat& format, CallNames* names = nullptr);

// Gives tool results the format's role (joining consecutive ones where it does), and puts
// its system note and the tools block (`tools`, or none) where it says.
void place_tools(std::vector<std::pair<std::string, std::string>>& chat, const ToolUse* tools,
                 const ToolFormat& format);

// An answer read back: the content before the first call (null when empty and there are
// calls) and OpenAI's tool_calls array (empty when none parsed).
struct ToolAnswer {
  nlohmann::json content;
  nlohmann::json tool_calls = nlohmann::json::array();
};
ToolAnswer parse_tool_answer(const std::string& text, const std::string& id_prefix,
                             const ToolFormat& format, const StringArgs* string_args = nullptr);

// A GBNF literal of `text`: quotes, backslashes, newlines, returns and tabs escaped.
std::string gbnf_literal(const std::string& text);

// kXmlArgs (GLM-4.5, Qwen3-Coder, Qwen3.5; xml_args_grammar.cpp): one call or, `parallel`,
// several, each the opening, a listed function's name and its arguments as key/value pairs
// in the format's markup and the schema's order, each at most once and the required ones
// always — a string argument's value raw text without the value's closing tag, any other
// the JSON its schema allows.
FieldError
xml_args_grammar(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& tools,
                 bool parallel, const ToolFormat& format, std::string& out);

// kSections (Kimi K2; kimi_tool_grammar.cpp): the calls in one section, each the opening, a listed
// function's id (`functions.NAME:INDEX`), then its arguments as its schema allows.
FieldError
sections_grammar(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& tools,
                 bool parallel, const ToolFormat& format, std::string& out);

// Each tool's parameters converted on their own, their rules prefixed "tool-I-" so the
// tools' grammars sit side by side (appended to `out`); `branches` the alternatives, each
// the tool's name, `between`, then its arguments.
FieldError
per_tool_branches(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& tools,
                  const std::string& between, std::string& out, std::string& branches);

// Per function, the arguments whose schema (a local $ref followed) is a string or one of
// strings: ToolUse::string_args (xml_args.cpp).
StringArgs
string_arguments(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& tools);

// GBNF with every reference to (and the definition of) rule `from` named `to`; literals,
// classes and comments are left alone.
std::string rename_rule(const std::string& gbnf, const std::string& from, const std::string& to);
// GBNF with every rule name prefixed (`prefix` + name), so grammars can be joined.
std::string prefix_rules(const std::string& gbnf, const std::string& prefix);

// While streaming: how much of the text so far may be sent as content — everything before
// a call begins, holding back a tail that could be the start of one.
// `from`: where an earlier call on a shorter start of the text stopped (every position
// before it could begin no call then, and cannot now), so a stream reads its text once.
size_t streamable_prefix(const std::string& text, const ToolFormat& format, size_t from = 0);

// Where the first call of `text` from `from` on opens (the format's whole opening text);
// npos when none does.
size_t find_call_open(const std::string& text, size_t from, const ToolFormat& format);

// The calls of an answer so far: each one whose name is whole, with its arguments as far
// as they have come (tool_call_partial.cpp). None for kArray (Mistral v3 / Tekken), whose
// calls name their ids after their arguments: they are sent whole at the end. `from`: no
// call opens before it (streamable_prefix's answer), so a stream scans its text once.
std::vector<PartialCall> partial_calls(const std::string& text, const ToolFormat& format,
                                       const std::string& id_prefix, size_t from = 0,
                                       const StringArgs* string_args = nullptr);
// The JSON value at text[from]: where it ends (one past), npos when the text ends first;
// `minified` gets what of it has come, without the whitespace outside strings.
size_t scan_json_value(const std::string& text, size_t from, std::string* minified);

// A streamed chat that offered tools: the content to send as it comes (never any of a
// call's text); each call as OpenAI streams one — its id and name once the name is whole,
// then its arguments piece by piece (`deltas`, tool_calls entries with their index); and
// with the last text the calls, whole (`calls`, what the answer made).
class ToolCallStream {
public:
  // `string_args`: the request's (ToolUse::string_args).
  explicit ToolCallStream(const ToolFormat& format = kHermesTools, StringArgs string_args = {})
      : format_(&format), string_args_(std::move(string_args)) {}
  struct Piece {
    std::string content;
    nlohmann::json deltas = nlohmann::json::array();
    nlohmann::json calls = nlohmann::json::array();
  };
  Piece push(const std::string& text, bool last, const std::string& id_prefix);

private:
  // The deltas that bring what was sent up to `calls`.
  void send_calls(const std::vector<PartialCall>& calls, Piece& p);
  // At the end: the deltas that finish the answer's calls (`calls`, parsed whole), and
  // those calls as p.calls.
  void send_final(nlohmann::json calls, const std::string& id_prefix, Piece& p);

  const ToolFormat* format_;
  StringArgs string_args_;
  std::string text_;
  size_t sent_ = 0;
  size_t scanned_ = 0;             // streamable_prefix's answer for the text so far
  std::vector<std::string> args_sent_; // per call announced: its arguments sent
};

} // namespace pshard::server
