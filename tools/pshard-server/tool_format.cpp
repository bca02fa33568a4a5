#include "tools/pshard-server/tool_format.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace pshard::server {
namespace {

using nlohmann::ordered_json;

std::string hermes_tools_text(const JsonList& tools) {
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

std::string hermes_calls_text(const JsonList& calls) {
  std::string s;
  for (const ordered_json& c : calls)
    s += (s.empty() ? "" : "\n") + std::string("<tool_call>\n") + c.dump() + "\n</tool_call>";
  return s;
}

std::string hermes_result_text(const std::string& content, const std::string&, const std::string&) {
  return "<tool_response>\n" + content + "\n</tool_response>";
}

// Meta's Llama 3.1 template, tools in the user message, word for word (its missing space
// after "value}." included: the models were trained on that text).
std::string llama3_tools_text(const JsonList& tools) {
  std::string s = "Given the following functions, please respond with a JSON for a function "
                  "call with its proper arguments that best answers the given prompt.\n\n"
                  "Respond in the format {\"name\": function name, \"parameters\": dictionary "
                  "of argument name and its value}.Do not use variables.\n\n";
  for (const ordered_json& t : tools)
    s += t.dump(4) + "\n\n";
  return s;
}

// The JSON object alone, as the template writes it (one a turn; several on lines).
std::string llama3_calls_text(const JsonList& calls) {
  std::string s;
  for (const ordered_json& c : calls)
    s += (s.empty() ? "" : "\n") + spaced_dump(c);
  return s;
}

std::string plain_result_text(const std::string& content, const std::string&, const std::string&) {
  return content;
}

// Mistral's templates; `space`: v3's space after each opening tag.
template <bool kSpace> std::string mistral_tools_text(const JsonList& tools) {
  return std::string("[AVAILABLE_TOOLS]") + (kSpace ? " " : "") + spaced_dump(ordered_json(tools)) +
         "[/AVAILABLE_TOOLS]";
}
template <bool kSpace> std::string mistral_calls_text(const JsonList& calls) {
  ordered_json written(calls);
  for (ordered_json& call : written)
    call["id"] = mistral_call_id(call.value("id", ""));
  return std::string("[TOOL_CALLS]") + (kSpace ? " " : "") + spaced_dump(written);
}
// The content as it is (not quoted: the templates write content|string there).
template <bool kSpace>
std::string mistral_result_text(const std::string& content, const std::string& call_id,
                                const std::string&) {
  return std::string("[TOOL_RESULTS]") + (kSpace ? " " : "") + "{\"content\": " + content +
         ", \"call_id\": " + ordered_json(mistral_call_id(call_id)).dump() + "}[/TOOL_RESULTS]";
}

// Small 3.2's and later templates: each call its name and arguments after its own
// [TOOL_CALLS], no ids; a result its content alone (the call it answers is the one
// before it).
std::string mistral_args_calls_text(const JsonList& calls) {
  std::string s;
  for (const ordered_json& c : calls)
    s += std::string("[TOOL_CALLS]") + c.value("name", "") + kArgsTag +
         spaced_dump(c.contains("arguments") ? c["arguments"] : ordered_json::object());
  return s;
}
std::string mistral_args_result_text(const std::string& content, const std::string&,
                                     const std::string&) {
  return "[TOOL_RESULTS]" + content + "[/TOOL_RESULTS]";
}

} // namespace

std::string spaced_dump(const ordered_json& j) {
  if (j.is_object()) {
    std::string s = "{";
    for (auto it = j.begin(); it != j.end(); ++it)
      s += (it == j.begin() ? "" : ", ") + ordered_json(it.key()).dump() + ": " +
           spaced_dump(it.value());
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < j.size(); ++i)
      s += (i ? ", " : "") + spaced_dump(j[i]);
    return s + "]";
  }
  return j.dump();
}

std::string mistral_call_id(const std::string& id) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (id.size() == 9 && std::all_of(id.begin(), id.end(), alnum))
    return id;
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (char c : id)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  constexpr std::string_view kDigits =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string out;
  for (int i = 0; i < 9; ++i, h /= kDigits.size())
    out += kDigits[h % kDigits.size()];
  return out;
}

const ToolFormat kHermesTools{.name = "hermes",
                              .call_open = "<tool_call>",
                              .call_close = "</tool_call>",
                              .args_key = "arguments",
                              .parallel = true,
                              .calls_form = CallsForm::kObjects,
                              .tools_at = ToolsAt::kSystem,
                              .tools_role = "",
                              .system_note = "",
                              .result_role = "user",
                              .join_results = true,
                              .tools_text = hermes_tools_text,
                              .calls_text = hermes_calls_text,
                              .result_text = hermes_result_text};

const ToolFormat kLlama3JsonTools{.name = "llama3-json",
                                  .call_open = "{\"name\"",
                                  .call_close = "",
                                  .args_key = "parameters",
                                  .parallel = false,
                                  .calls_form = CallsForm::kObjects,
                                  .tools_at = ToolsAt::kFirstUser,
                                  .tools_role = "",
                                  .system_note = "Environment: ipython\n",
                                  .result_role = "ipython",
                                  .join_results = false,
                                  .tools_text = llama3_tools_text,
                                  .calls_text = llama3_calls_text,
                                  .result_text = plain_result_text};

// The tools block and results are turns of their own roles, which Mistral's renderers
// write as they are, between the [INST] blocks (runtime/chat). v3 and Tekken differ only
// in the space after each tag.
template <bool kSpace> constexpr ToolFormat mistral_format(const char* name) {
  return {.name = name,
          .call_open = "[TOOL_CALLS]",
          .call_close = "",
          .args_key = "arguments",
          .parallel = true,
          .calls_form = CallsForm::kArray,
          .tools_at = ToolsAt::kBeforeLastUser,
          .tools_role = "available_tools",
          .system_note = "",
          .result_role = "tool_results",
          .join_results = false,
          .tools_text = mistral_tools_text<kSpace>,
          .calls_text = mistral_calls_text<kSpace>,
          .result_text = mistral_result_text<kSpace>};
}
const ToolFormat kMistralV3Tools = mistral_format<true>("mistral-v3");
const ToolFormat kMistralTekkenTools = mistral_format<false>("mistral-tekken");
const ToolFormat kMistralArgsTools = [] {
  ToolFormat f = mistral_format<false>("mistral-args");
  f.calls_form = CallsForm::kNamedArgs;
  f.calls_text = mistral_args_calls_text;
  f.result_text = mistral_args_result_text;
  return f;
}();

const ToolFormat kChatglm4Tools = [] {
  ToolFormat f = kHermesTools; // never rendered: read_tools refuses tools first
  f.name = "chatglm4 (not built)";
  f.not_built = "GLM-4-0414's: a Chinese system prompt listing the tools, calls as the "
                "function's name and its JSON arguments, results as observation turns";
  return f;
}();

const ToolFormat& tool_format_for(std::string_view chat_template, bool args_token) {
  if (chat_template == "gpt-oss")
    return kHarmonyTools;
  if (chat_template == "glm-4.5")
    return kGlmXmlTools;
  if (chat_template == "chatglm4")
    return kChatglm4Tools;
  if (chat_template == "kimi-k2")
    return kKimiK2Tools;
  if (chat_template == "qwen3-coder")
    return kQwen3CoderTools;
  if (chat_template == "qwen3.5")
    return kQwen35Tools;
  if (chat_template == "llama3" || chat_template == "llama4")
    return kLlama3JsonTools;
  if (chat_template == "mistral-v3")
    return kMistralV3Tools;
  if (chat_template == "mistral-v3-tekken" || chat_template == "mistral-v7" ||
      chat_template == "mistral-v7-tekken")
    return args_token ? kMistralArgsTools : kMistralTekkenTools;
  return kHermesTools;
}

} // namespace pshard::server
