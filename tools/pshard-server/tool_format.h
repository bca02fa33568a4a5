// How a model family writes function calls, picked by the chat template in use:
//
//   hermes       (Qwen2.5, Qwen3, Hermes, and every template not named below): the tools
//                in the system message inside <tools></tools>; a call is
//                <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, several a
//                turn; results are user turns inside <tool_response></tool_response>.
//   llama3-json  (Llama 3.1, 3.2, 3.3: Meta's JSON-based tool calling; also Llama 4, whose
//                template lists the tools word for word so and reads results as ipython
//                turns): "Environment: ipython" in the system message and the tools, one JSON
//                object each, before the first user message's text; a call is the answer's
//                JSON object {"name": ..., "parameters": {...}}, one a turn; results are
//                `ipython` turns.
//   mistral-v3, mistral-tekken  (Mistral 7B v0.3 and Mixtral 8x22B; Nemo, Small 3 and
//                Large 2411 by the v3-tekken and v7 templates): the tools as
//                [AVAILABLE_TOOLS][...][/AVAILABLE_TOOLS] before the last user turn; the
//                calls one JSON array after [TOOL_CALLS], each {"name", "arguments", "id"}
//                with an id of 9 letters and digits that its result names back as
//                [TOOL_RESULTS]{"content": ..., "call_id": ...}[/TOOL_RESULTS]; v3
//                writes a space after each of those tags, Tekken none.
//   mistral-args (the Tekken templates on a vocabulary with Mistral's [ARGS] token: Small
//                3.2, Magistral, Devstral, Ministral 3 — mistral-common's tokenizers v11
//                and v13): the tools as Tekken's; each call [TOOL_CALLS]NAME[ARGS]{...},
//                one after another, the model's own [CALL_ID]ID before [ARGS] read back
//                too; earlier calls written without ids and results as
//                [TOOL_RESULTS]...[/TOOL_RESULTS], as the models' chat templates write them.
//   harmony      (gpt-oss): the tools as TypeScript declarations in `namespace functions`
//                in the developer message, and the system message's note that calls go to
//                the commentary channel; a call is a message of its own,
//                <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
//                ending the answer with <|call|>; a result is a message from
//                functions.NAME to the assistant (harmony_tools.cpp).
//   glm-xml      (GLM-4.5, -Air, 4.6): the tools, one JSON line each inside <tools></tools>,
//                in a system turn of their own first; a call is <tool_call>NAME, then
//                <arg_key>KEY</arg_key> <arg_value>VALUE</arg_value> per argument (a string
//                raw, any other value JSON), then </tool_call>, several a turn; results
//                follow one <|observation|> per run, each inside <tool_response></tool_response>
//                (glm_tools.cpp).
//   kimi-k2      (Kimi K2, K2-Instruct-0905, K2-Thinking): the tools as one JSON array in a
//                tool_declare turn before every other; the calls in one section after the
//                answer's text, each <|tool_call_begin|>functions.NAME:INDEX
//                <|tool_call_argument_begin|>{...}<|tool_call_end|>, the model's id kept;
//                results tool turns opening "## Return of ID" (kimi_tools.cpp).
//   qwen3-coder  (Qwen3-Coder, Qwen3-Coder-Next): the tools in XML (<function><name>...) after
//                the system message (a default one when there is none); a call is
//                <tool_call>\n<function=NAME>\n, per argument <parameter=KEY>\nVALUE\n</parameter>
//                (a string raw, any other value as Python's str() writes it), then
//                </function>\n</tool_call>, several a turn; results one user turn, each
//                <tool_response>\n...\n</tool_response>\n (qwen_xml_tools.cpp).
//   qwen3.5      (Qwen3.5): Qwen3-Coder's calls, the tools one JSON line each before the
//                system message's text, lists and objects in calls written as JSON, results
//                joined by newlines as Hermes's (qwen_xml_tools.cpp).
//
// Everything format-specific is data here; tool_calls.h does the rest the same way for all.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pshard::server {

struct ToolAnswer; // tool_calls.h

// A call of an answer still being written (tool_calls.h's partial_calls).
struct PartialCall {
  std::string id, name;  // the name is whole
  std::string arguments; // its arguments' JSON so far, whitespace outside strings dropped
  bool whole = false;    // the arguments are complete
};

using JsonList = std::vector<nlohmann::ordered_json>;

// Per offered function, the arguments whose schema is a string: kXmlArgs writes those raw and
// every other value in its own spelling, so reading a call back needs to know which is which.
using StringArgs = std::map<std::string, std::set<std::string>>;

// Where the tools block goes: appended to the system message, before the first user
// message's text, or as a turn of its own (role `tools_role`) before the last user
// message (and before a system message right ahead of it).
enum class ToolsAt {
  kSystem,
  kSystemFirst,
  kFirstUser,
  kBeforeLastUser,
  kDeveloper,
  kOwnFirstSystem
};

// kSystemFirst: the system message's start, the client's system text after it (Qwen3.5).
// kDeveloper: appended to the system message (harmony's developer instructions), or
// without one a turn of its own (ToolFormat::tools_turn). kOwnFirstSystem: a system turn
// of its own before every other (GLM-4.5's), the client's system message after it.
// How the calls of one answer are written after call_open:
//   kObjects    each call its JSON object {"name", args_key} (wrapped in call_open and
//               call_close when there is one)
//   kArray      one JSON array of all calls, each object with an "id" of 9 letters and
//               digits (the model writes it; results name it back)
//   kNamedArgs  each call call_open NAME [CALL_ID]ID (optional) [ARGS] {arguments}
//   kHarmony    one call: call_open NAME, harmony's header rest, <|message|> {arguments}
//   kXmlArgs    each call call_open NAME, its arguments as XML-tagged key/value pairs,
//               call_close, in the format's XmlArgsMarkup (GLM-4.5, Qwen3-Coder, Qwen3.5)
//   kSections   call_open, then each call <|tool_call_begin|>functions.NAME:INDEX
//               <|tool_call_argument_begin|>{arguments}<|tool_call_end|>, then call_close
//               (Kimi K2)
enum class CallsForm { kObjects, kArray, kNamedArgs, kHarmony, kXmlArgs, kSections };

// How kXmlArgs writes a call (xml_args.h):
//
//   call_open [newline name_open] NAME name_close newline
//   per argument: key_open KEY key_close newline value_open VALUE [newline] value_close newline
//   [args_close newline] call_close
//
// and reads one back with any space between the parts, a value as it stands between its
// tags (less one newline at each end where `value_in_newlines`).
struct XmlArgsMarkup {
  std::string_view name_open;  // "": the name follows call_open (GLM-4.5)
  std::string_view name_close; // "": the name ends at its line's end or a '<'
  std::string_view key_open, key_close;
  std::string_view value_open; // "": the value follows key_close's newline
  std::string_view value_close;
  std::string_view args_close; // before call_close ("": none)
  bool value_in_newlines;
  // A value that is not a string as the format writes it (a string is always raw).
  std::string (*value_text)(const nlohmann::ordered_json& value);
};

struct ToolFormat {
  const char* name;
  const char* call_open;  // a call begins with this text: tool_choice "auto"'s trigger
  const char* call_close; // and ends with this ("": with its JSON object, or array)
  const char* args_key;   // the call object's arguments: "arguments" or "parameters"
  bool parallel;          // several calls in one answer
  CallsForm calls_form;
  ToolsAt tools_at;
  const char* tools_role;  // kBeforeLastUser: the role of the block's turn
  const char* system_note; // put first in the system message when tools are offered
  const char* result_role; // the role a tool result is rendered under
  bool join_results;       // consecutive results in one turn
  std::string (*tools_text)(const JsonList& tools);
  // An assistant's earlier calls, each {"name", args_key, ["id" as the client sent it]},
  // as the model writes them (ids put in the format's form); null where calls_turn is set.
  std::string (*calls_text)(const JsonList& calls);
  // A tool result as its turn's text; `call_id` as the client sent it, `name` the function
  // of the call it answers (by that id, else the latest call; "" when none is known).
  std::string (*result_text)(const std::string& content, const std::string& call_id,
                             const std::string& name);
  // Harmony's (null for the others): the tools' own turn (kDeveloper without a system
  // message); an assistant message with calls as a whole turn of role `text_role` (its
  // content, then the calls); a fix to the rendered prompt when tools are offered; the
  // answer read back; what of an answer so far may stream as content ([begin, end)); and
  // its calls so far.
  const char* text_role = "";
  // An assistant turn's text beside its calls is its analysis, which the template drops
  // once a later assistant message without calls (a final answer) follows (harmony).
  bool drops_answered_analysis = false;
  std::string (*tools_turn)(const std::string& tools_text) = nullptr;
  std::string (*calls_turn)(const std::string& content, const JsonList& calls) = nullptr;
  void (*after_render)(std::string& prompt) = nullptr;
  // `string_args`: the offered functions' string arguments (null: not known).
  ToolAnswer (*parse)(const std::string& text, const std::string& id_prefix,
                      const StringArgs* string_args) = nullptr;
  std::pair<size_t, size_t> (*streamable)(const std::string& text) = nullptr;
  std::vector<PartialCall> (*partial)(const std::string& text, const std::string& id_prefix,
                                      const StringArgs* string_args) = nullptr;
  // Set for a family whose calls pshard-server does not write (what they are, for the
  // error): requests with tools are refused rather than written in a format the model was
  // not trained on.
  const char* not_built = nullptr;
  // kXmlArgs's markup (null for the other forms).
  const XmlArgsMarkup* xml = nullptr;
  // Between an assistant message's text and its calls, when it has text.
  const char* calls_after_text = "\n";
  // Between joined results (join_results).
  const char* results_between = "\n";
  // The system message written when tools are offered and the client sent none (kSystem).
  const char* default_system = "";
  // An assistant message after the last user message is written after its reasoning_content
  // as the thought it followed (Qwen3.5's template; with or without tools offered).
  bool keeps_recent_thoughts = false;
};

extern const ToolFormat kHermesTools;
extern const ToolFormat kLlama3JsonTools;
extern const ToolFormat kMistralV3Tools;
extern const ToolFormat kMistralTekkenTools;
extern const ToolFormat kMistralArgsTools;
extern const ToolFormat kHarmonyTools;
extern const ToolFormat kGlmXmlTools;
extern const ToolFormat kKimiK2Tools;
extern const ToolFormat kQwen3CoderTools;
extern const ToolFormat kQwen35Tools;
// GLM-4-0414's template (chatglm4): its calls are not built (ToolFormat::not_built).
extern const ToolFormat kChatglm4Tools;

// The tokens that mark a kNamedArgs call's parts.
inline constexpr const char* kArgsTag = "[ARGS]";
inline constexpr const char* kCallIdTag = "[CALL_ID]";

// The format of a chat template (pshard_chat_builtin_templates' names): llama3 and llama4 ->
// llama3-json, mistral-v3 -> mistral-v3, mistral-v3-tekken / -v7 / -v7-tekken ->
// mistral-tekken (mistral-args when `args_token`: the vocabulary has [ARGS] as one
// token), gpt-oss -> harmony, glm-4.5 -> glm-xml, kimi-k2 -> kimi-k2, qwen3-coder ->
// qwen3-coder, qwen3.5 -> qwen3.5, chatglm4 -> refused, anything else -> hermes.
const ToolFormat& tool_format_for(std::string_view chat_template, bool args_token = false);

// JSON with Python's separators (", " and ": "), as Jinja's tojson writes calls and tools
// into the templates.
std::string spaced_dump(const nlohmann::ordered_json& j);

// A call id in Mistral's form, 9 letters and digits: an id already so is kept, any other
// is mapped to one by a hash of it (the same id always to the same one, so a call and
// its result still match).
std::string mistral_call_id(const std::string& id);

} // namespace pshard::server
