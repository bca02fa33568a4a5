// OpenAI's harmony function calling (gpt-oss; tool_format.h), as the model's published
// chat template renders it: the tools as TypeScript declarations in the developer
// message, a call as its own assistant message to `functions.NAME` on the commentary
// channel, a result as a message from that function back to the assistant. Read back,
// an answer is a sequence of messages (`<|start|>assistant` between them, the header up
// to `<|message|>`): those addressed to a function are the calls, the others' text the
// content.
#include "tools/pshard-server/tool_calls.h"
#include "tools/pshard-server/tool_format.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kRecipient = "to=functions.";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kNextMessage = "<|start|>assistant";
constexpr std::string_view kFinal = "<|channel|>final<|message|>";

std::string join(const ordered_json& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? sep : "") + (items[i].is_string() ? items[i].get<std::string>() : items[i].dump());
  return out;
}

bool listed(const ordered_json& required, const std::string& name) {
  if (!required.is_array())
    return false;
  for (const ordered_json& r : required)
    if (r.is_string() && r.get<std::string>() == name)
      return true;
  return false;
}

// A JSON Schema as the template's TypeScript-like type (its render_typescript_type).
std::string ts_type(const ordered_json& s) {
  if (!s.is_object())
    return "any";
  const ordered_json type = s.value("type", ordered_json());
  const bool nullable = s.value("nullable", false);
  const std::string null = nullable ? " | null" : "";
  if (type == "array") {
    if (!s.contains("items") || !s["items"].is_object())
      return "any[]" + null;
    const ordered_json item = s["items"].value("type", ordered_json());
    if (item == "string" || item == "boolean")
      return item.get<std::string>() + "[]" + null;
    if (item == "number" || item == "integer")
      return "number[]" + null;
    const std::string inner = ts_type(s["items"]);
    return (inner == "object | object" || inner.size() > 50 ? "any" : inner) + "[]" + null;
  }
  if (type.is_array() && !type.empty())
    return join(type, " | ");
  if (s.contains("oneOf") && s["oneOf"].is_array() && !s["oneOf"].empty()) {
    const ordered_json& variants = s["oneOf"];
    bool objects = false;
    for (const ordered_json& v : variants)
      objects = objects || (v.is_object() && v.value("type", ordered_json()) == "object");
    if (objects && variants.size() > 1)
      return "any";
    std::string out;
    for (size_t i = 0; i < variants.size(); ++i) {
      out += (i ? " | " : "") + ts_type(variants[i]);
      if (variants[i].is_object() && variants[i].contains("description") &&
          variants[i]["description"].is_string())
        out += "// " + variants[i]["description"].get<std::string>();
    }
    return out;
  }
  if (type == "string") {
    if (s.contains("enum") && s["enum"].is_array() && !s["enum"].empty())
      return "\"" + join(s["enum"], "\" | \"") + "\"";
    return "string" + null;
  }
  if (type == "number" || type == "integer")
    return "number";
  if (type == "boolean")
    return "boolean";
  if (type == "object") {
    if (!s.contains("properties") || !s["properties"].is_object() || s["properties"].empty())
      return "object";
    const ordered_json required = s.value("required", ordered_json::array());
    std::string out = "{\n";
    bool first = true;
    for (const auto& [name, prop] : s["properties"].items()) {
      out +=
          (first ? "" : ", ") + name + (listed(required, name) ? "" : "?") + ": " + ts_type(prop);
      first = false;
    }
    return out + "}";
  }
  return "any";
}

// "# Tools\n\n## functions\n\nnamespace functions {...} // namespace functions".
std::string harmony_tools_text(const JsonList& tools) {
  std::string s = "# Tools\n\n## functions\n\nnamespace functions {\n\n";
  for (const ordered_json& t : tools) {
    const ordered_json& f = t["function"];
    s += "// " + f.value("description", std::string()) + "\n";
    s += "type " + f.value("name", std::string()) + " = ";
    const ordered_json params = f.value("parameters", ordered_json::object());
    if (!params.contains("properties") || !params["properties"].is_object() ||
        params["properties"].empty()) {
      s += "() => any;\n\n";
      continue;
    }
    const ordered_json required = params.value("required", ordered_json::array());
    s += "(_: {\n";
    for (const auto& [name, spec] : params["properties"].items()) {
      if (spec.is_object() && spec.contains("description") && spec["description"].is_string())
        s += "// " + spec["description"].get<std::string>() + "\n";
      s += name + (listed(required, name) ? "" : "?") + ": " + ts_type(spec);
      if (spec.is_object() && spec.contains("default")) {
        const ordered_json& d = spec["default"];
        const std::string shown = d.is_string() ? d.get<std::string>() : d.dump();
        if (spec.contains("enum"))
          s += ", // default: " + shown;
        else if (spec.contains("oneOf"))
          s += "// default: " + shown;
        else
          s += ", // default: " + spaced_dump(d);
      }
      s += ",\n";
    }
    s += "}) => any;\n\n";
  }
  return s + "} // namespace functions";
}

// Without the client's system message, the developer message holds the tools alone (the
// template writes the blank lines that would follow its instructions all the same).
std::string harmony_tools_turn(const std::string& tools_text) {
  return "<|start|>developer<|message|>\n\n" + tools_text + "<|end|>";
}

// An earlier answer's text as its analysis, then each call as its own message (the
// template writes one call a message).
std::string harmony_calls_turn(const std::string& content, const JsonList& calls) {
  std::string s;
  if (!content.empty())
    s += "<|start|>assistant<|channel|>analysis<|message|>" + content + "<|end|>";
  for (const ordered_json& c : calls)
    s += "<|start|>assistant to=functions." + c.value("name", std::string()) +
         "<|channel|>commentary json<|message|>" +
         spaced_dump(c.contains("arguments") ? c["arguments"] : ordered_json::object()) +
         "<|call|>";
  return s;
}

std::string harmony_result_text(const std::string& content, const std::string&,
                                const std::string& name) {
  return "<|start|>functions." + name + " to=assistant<|channel|>commentary<|message|>" +
         json(content).dump() + "<|end|>";
}

// The system message says where calls go when there are tools.
void harmony_after_render(std::string& prompt) {
  constexpr std::string_view kChannels =
      "# Valid channels: analysis, commentary, final. Channel must be included for every "
      "message.";
  const size_t at = prompt.find(kChannels);
  if (at != std::string::npos)
    prompt.insert(at + kChannels.size(),
                  "\nCalls to these tools must go to the commentary channel: 'functions'.");
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// The answer's messages: each one's header (channel, recipient) and text.
ToolAnswer harmony_parse(const std::string& text, const std::string& id_prefix, const StringArgs*) {
  ToolAnswer a;
  std::string content;
  size_t at = 0;
  while (at <= text.size()) {
    size_t next = text.find(kNextMessage, at);
    const size_t end = next == std::string::npos ? text.size() : next;
    const std::string_view message(text.data() + at, end - at);
    const size_t body = message.find(kMessage);
    const std::string_view header = body == std::string_view::npos ? "" : message.substr(0, body);
    std::string_view said =
        body == std::string_view::npos ? message : message.substr(body + kMessage.size());
    for (std::string_view end_tag : {"<|end|>", "<|call|>", "<|return|>"})
      if (said.size() >= end_tag.size() && said.substr(said.size() - end_tag.size()) == end_tag)
        said.remove_suffix(end_tag.size());
    const size_t to = header.find(kRecipient);
    if (to != std::string_view::npos) {
      size_t n = to + kRecipient.size();
      while (n < header.size() && name_char(header[n]))
        ++n;
      const std::string name(header.substr(to + kRecipient.size(), n - to - kRecipient.size()));
      const ordered_json args = ordered_json::parse(said, nullptr, false);
      if (name.empty() || args.is_discarded() || !args.is_object())
        break; // cut off (max_tokens) or not a call: what came before stays
      a.tool_calls.push_back({{"id", id_prefix + std::to_string(a.tool_calls.size())},
                              {"type", "function"},
                              {"function", {{"name", name}, {"arguments", args.dump()}}}});
    } else if (!said.empty()) {
      content += (content.empty() ? "" : "\n") + std::string(said);
    }
    if (next == std::string::npos)
      break;
    at = next + kNextMessage.size();
  }
  if (a.tool_calls.empty())
    a.content = content;
  else
    a.content = content.empty() ? json(nullptr) : json(content);
  return a;
}

// The call so far: a message to functions.NAME whose header is whole, its JSON after
// <|message|> as far as it has come (one call an answer: it ends the answer).
std::vector<PartialCall> harmony_partial(const std::string& text, const std::string& id_prefix,
                                         const StringArgs*) {
  const size_t to = text.find(kRecipient);
  if (to == std::string::npos)
    return {};
  size_t n = to + kRecipient.size();
  while (n < text.size() && name_char(text[n]))
    ++n;
  const size_t body = text.find(kMessage, n);
  if (body == std::string::npos || n == to + kRecipient.size())
    return {};
  PartialCall call;
  call.id = id_prefix + "0";
  call.name = text.substr(to + kRecipient.size(), n - to - kRecipient.size());
  size_t at = body + kMessage.size();
  while (at < text.size() && (text[at] == ' ' || text[at] == '\n'))
    ++at;
  if (at < text.size() && text[at] != '{')
    return {};
  call.whole = at < text.size() && scan_json_value(text, at, &call.arguments) != std::string::npos;
  return {call};
}

// Streams the final channel's text as it comes, up to a marker that may end it (every
// harmony marker begins "<|"); anything else may still be a call.
std::pair<size_t, size_t> harmony_streamable(const std::string& text) {
  if (text.compare(0, kFinal.size(), kFinal) != 0)
    return {0, 0};
  size_t end = text.find("<|", kFinal.size());
  if (end == std::string::npos)
    end = text.back() == '<' ? text.size() - 1 : text.size();
  return {kFinal.size(), std::max(end, kFinal.size())};
}

} // namespace

const ToolFormat kHarmonyTools{.name = "harmony",
                               .call_open = "to=functions.",
                               .call_close = "",
                               .args_key = "arguments",
                               .parallel = false,
                               .calls_form = CallsForm::kHarmony,
                               .tools_at = ToolsAt::kDeveloper,
                               .tools_role = "harmony",
                               .system_note = "",
                               .result_role = "harmony",
                               .join_results = false,
                               .tools_text = harmony_tools_text,
                               .calls_text = nullptr, // calls_turn writes them
                               .result_text = harmony_result_text,
                               .text_role = "harmony",
                               .drops_answered_analysis = true,
                               .tools_turn = harmony_tools_turn,
                               .calls_turn = harmony_calls_turn,
                               .after_render = harmony_after_render,
                               .parse = harmony_parse,
                               .streamable = harmony_streamable,
                               .partial = harmony_partial};

} // namespace pshard::server
