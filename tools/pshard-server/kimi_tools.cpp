// Kimi K2's function calling (kimi-k2 template: Kimi K2, K2-Instruct-0905, K2-Thinking), as
// Moonshot's published templates write it: the tools as one JSON array (tojson's spacing)
// in a `tool_declare` turn before every other; an answer's calls after its text, in one
// section,
//
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
//   <|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>
//
// (written on one line; the id `functions.NAME:INDEX` is the model's, kept as the call's id,
// so that the client sends it back and the template writes it as the model wrote it); a
// result a `tool` turn opening with "## Return of ID".
#include "tools/pshard-server/kimi_markers.h"
#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/tool_calls.h"

#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

using namespace kimi;

std::string kimi_tools_text(const JsonList& tools) { return spaced_dump(ordered_json(tools)); }

// The content, then every call in one section: a call's id as the client sent it back, or
// the model's form of one.
std::string kimi_calls_turn(const std::string& content, const JsonList& calls) {
  std::string s = content + std::string(kSectionOpen);
  for (size_t i = 0; i < calls.size(); ++i) {
    const ordered_json& c = calls[i];
    const std::string name = c.value("name", "");
    const std::string id = c.value("id", std::string(kIdPrefix) + name + ":" + std::to_string(i));
    const auto args = c.find("arguments"); // the client's text, or an object
    const std::string text = args == c.end()     ? std::string("{}")
                             : args->is_string() ? args->get<std::string>()
                                                 : args->dump();
    s += std::string(kCallOpen) + id + std::string(kArgsOpen) + text + std::string(kCallClose);
  }
  return s + std::string(kSectionClose);
}

std::string kimi_result_text(const std::string& content, const std::string& call_id,
                             const std::string&) {
  return "## Return of " + call_id + "\n" + content;
}

// The function an id names: "functions.NAME:INDEX" -> NAME (a bare NAME stays).
std::string_view name_of(std::string_view id) {
  if (id.substr(0, kIdPrefix.size()) == kIdPrefix)
    id.remove_prefix(kIdPrefix.size());
  const size_t colon = id.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < id.size() &&
      id.find_first_not_of("0123456789", colon + 1) == std::string_view::npos)
    id = id.substr(0, colon);
  return id;
}

struct ReadCall {
  PartialCall call;
  bool named = false; // its id (so its name) is whole
  size_t end = std::string::npos;
};

// The call whose <|tool_call_begin|> is at text[at].
ReadCall read_call(const std::string& text, size_t at) {
  ReadCall r;
  const size_t id_at = at + kCallOpen.size(), args = text.find(kArgsOpen, id_at);
  if (args == std::string::npos)
    return r;
  const std::string_view id = trim_space(std::string_view(text).substr(id_at, args - id_at));
  r.call.id = std::string(id);
  r.call.name = std::string(name_of(id));
  r.named = !r.call.name.empty();
  const size_t body = skip_space(text, args + kArgsOpen.size());
  if (!r.named || body >= text.size() || text[body] != '{')
    return r;
  const size_t end = scan_json_value(text, body, &r.call.arguments);
  if (end == std::string::npos)
    return r;
  const size_t close = skip_space(text, end);
  r.call.whole = text.compare(close, kCallClose.size(), kCallClose) == 0;
  if (r.call.whole)
    r.end = close + kCallClose.size();
  return r;
}

// Each call of the section opening at text[open], as far as it has come: whole calls, then
// at most one still being written.
std::vector<PartialCall> section_calls(const std::string& text, size_t open) {
  std::vector<PartialCall> calls;
  for (size_t at = skip_space(text, open + kSectionOpen.size());
       text.compare(at, kCallOpen.size(), kCallOpen) == 0;) {
    ReadCall r = read_call(text, at);
    if (!r.named)
      break;
    calls.push_back(std::move(r.call));
    if (r.end == std::string::npos)
      break;
    at = skip_space(text, r.end);
  }
  return calls;
}

ToolAnswer kimi_parse(const std::string& text, const std::string&, const StringArgs*) {
  ToolAnswer a;
  const size_t open = text.find(kSectionOpen);
  json calls = json::array();
  if (open != std::string::npos)
    for (const PartialCall& c : section_calls(text, open)) {
      const json args = json::parse(c.arguments, nullptr, false);
      if (!c.whole || !args.is_object())
        break; // cut off (max_tokens): what came before stays
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", args.dump()}}}});
    }
  if (calls.empty()) {
    a.content = text;
    return a;
  }
  std::string_view content = std::string_view(text).substr(0, open);
  while (!content.empty() && is_space(content.back()))
    content.remove_suffix(1);
  a.content = content.empty() ? json(nullptr) : json(std::string(content));
  a.tool_calls = std::move(calls);
  return a;
}

std::vector<PartialCall> kimi_partial(const std::string& text, const std::string&,
                                      const StringArgs*) {
  const size_t open = text.find(kSectionOpen);
  return open == std::string::npos ? std::vector<PartialCall>{} : section_calls(text, open);
}

} // namespace

const ToolFormat kKimiK2Tools{.name = "kimi-k2",
                              .call_open = kimi::kSectionOpen.data(),
                              .call_close = kimi::kSectionClose.data(),
                              .args_key = "arguments",
                              .parallel = true,
                              .calls_form = CallsForm::kSections,
                              .tools_at = ToolsAt::kOwnFirstSystem,
                              .tools_role = "tool_declare",
                              .system_note = "",
                              .result_role = "tool",
                              .join_results = false,
                              .tools_text = kimi_tools_text,
                              .calls_text = nullptr,
                              .result_text = kimi_result_text,
                              .text_role = "assistant",
                              .calls_turn = kimi_calls_turn,
                              .parse = kimi_parse,
                              .partial = kimi_partial};

} // namespace pshard::server
