// kXmlArgs's calls written and read back from the format's markup (xml_args.h).
#include "tools/pshard-server/xml_args.h"

#include "tools/pshard-server/text_space.h"
#include "tools/pshard-server/tool_calls.h"

#include <algorithm>
#include <string_view>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

bool starts_at(const std::string& text, size_t at, std::string_view s) {
  return text.compare(at, s.size(), s) == 0;
}

// A value as the call's argument: raw text for a string argument, else the JSON it spells,
// or Python's spelling of true, false and null (what Qwen's templates write with str()); text
// that is neither stays a string (a function whose schema is not known).
ordered_json argument_value(const std::string& raw, const std::set<std::string>* strings,
                            const std::string& key) {
  if (strings && strings->count(key))
    return raw;
  ordered_json v = ordered_json::parse(raw, nullptr, false);
  if (!v.is_discarded())
    return v;
  const std::string_view t = trim_space(raw);
  if (t == "True" || t == "False")
    return t == "True";
  if (t == "None")
    return nullptr;
  return raw;
}

// One call whose text after call_open starts at text[at]: its name, its arguments' JSON as
// far as whole pairs have come (no closing brace), whether it is whole, and where it ends.
struct ReadCall {
  std::string name;
  std::string arguments = "{";
  ordered_json args = ordered_json::object();
  bool named = false, whole = false;
  size_t end = std::string::npos;
  size_t args_end = std::string::npos; // past args_close, when the format has one
};

// Where the name starting at text[at] ends (npos while it may still grow).
size_t name_end(const std::string& text, size_t at, const XmlArgsMarkup& m) {
  return m.name_close.empty() ? text.find_first_of("\n<", at) : text.find(m.name_close, at);
}

// The value starting at text[at]: where it ends (at value_close; npos when not yet), and
// the value in `raw`.
size_t read_value(const std::string& text, size_t at, const XmlArgsMarkup& m, std::string& raw) {
  const size_t end = text.find(m.value_close, at);
  if (end == std::string::npos)
    return end;
  raw = text.substr(at, end - at);
  if (m.value_in_newlines) {
    if (raw.starts_with('\n'))
      raw.erase(0, 1);
    if (raw.ends_with('\n'))
      raw.pop_back();
  }
  return end;
}

ReadCall read_call(const std::string& text, size_t at, const ToolFormat& f,
                   const StringArgs* string_args) {
  const XmlArgsMarkup& m = *f.xml;
  ReadCall c;
  if (!m.name_open.empty()) {
    at = skip_space(text, at);
    if (!starts_at(text, at, m.name_open))
      return c;
    at += m.name_open.size();
  }
  const size_t stop = name_end(text, at, m);
  if (stop == std::string::npos)
    return c;
  c.name = std::string(trim_space(std::string_view(text).substr(at, stop - at)));
  c.named = !c.name.empty();
  const std::set<std::string>* strings = nullptr;
  if (string_args)
    if (auto it = string_args->find(c.name); it != string_args->end())
      strings = &it->second;
  size_t p = skip_space(text, stop + m.name_close.size());
  while (starts_at(text, p, m.key_open)) {
    const size_t key_end = text.find(m.key_close, p + m.key_open.size());
    if (key_end == std::string::npos)
      return c;
    const std::string key = text.substr(p + m.key_open.size(), key_end - p - m.key_open.size());
    size_t v = key_end + m.key_close.size();
    if (!m.value_open.empty()) {
      v = skip_space(text, v);
      if (!starts_at(text, v, m.value_open))
        return c;
      v += m.value_open.size();
    }
    std::string raw;
    const size_t value_end = read_value(text, v, m, raw);
    if (value_end == std::string::npos)
      return c;
    const ordered_json value = argument_value(raw, strings, key);
    if (!c.args.contains(key)) { // a key said twice keeps its first value, streamed or not
      c.arguments += (c.args.empty() ? "" : ",") + json(key).dump() + ":" + value.dump();
      c.args[key] = value;
    }
    p = skip_space(text, value_end + m.value_close.size());
  }
  if (!m.args_close.empty()) {
    if (!starts_at(text, p, m.args_close))
      return c;
    c.args_end = p + m.args_close.size();
    p = skip_space(text, c.args_end);
  }
  if (starts_at(text, p, f.call_close)) {
    c.whole = true;
    c.arguments += "}";
    c.end = p + std::string_view(f.call_close).size();
  }
  return c;
}

} // namespace

std::string xml_args_calls_text(const ToolFormat& f, const JsonList& calls) {
  const XmlArgsMarkup& m = *f.xml;
  std::string s;
  for (const ordered_json& c : calls) {
    s += std::string(s.empty() ? "" : "\n") + f.call_open;
    if (!m.name_open.empty())
      s += "\n" + std::string(m.name_open);
    s += c.value("name", "") + std::string(m.name_close) + "\n";
    const auto args = c.find(f.args_key);
    if (args != c.end() && args->is_object())
      for (const auto& [key, value] : args->items())
        s += std::string(m.key_open) + key + std::string(m.key_close) + "\n" +
             std::string(m.value_open) +
             (value.is_string() ? value.get<std::string>() : m.value_text(value)) +
             (m.value_in_newlines ? "\n" : "") + std::string(m.value_close) + "\n";
    if (!m.args_close.empty())
      s += std::string(m.args_close) + "\n";
    s += f.call_close;
  }
  return s;
}

ToolAnswer xml_args_parse(const std::string& text, const std::string& id_prefix,
                          const ToolFormat& format, const StringArgs* string_args) {
  ToolAnswer a;
  const std::string_view open = format.call_open;
  const size_t first = text.find(open);
  for (size_t at = first; at != std::string::npos; at = text.find(open, at)) {
    ReadCall c = read_call(text, at + open.size(), format, string_args);
    // An answer that stops right after the arguments' close (its call_close unwritten) ends
    // the call there.
    if (c.named && !c.whole && c.args_end != std::string::npos &&
        skip_space(text, c.args_end) == text.size()) {
      c.whole = true;
      c.end = text.size();
    }
    if (!c.named || !c.whole)
      break; // cut off (max_tokens) or not a call: what came before stays
    a.tool_calls.push_back({{"id", id_prefix + std::to_string(a.tool_calls.size())},
                            {"type", "function"},
                            {"function", {{"name", c.name}, {"arguments", c.args.dump()}}}});
    at = c.end;
  }
  if (a.tool_calls.empty()) {
    a.content = text;
    return a;
  }
  std::string content = text.substr(0, first);
  while (!content.empty() && is_space(content.back()))
    content.pop_back();
  a.content = content.empty() ? json(nullptr) : json(content);
  return a;
}

std::vector<PartialCall> xml_args_partial(const std::string& text, const std::string& id_prefix,
                                          const ToolFormat& format, const StringArgs* string_args) {
  std::vector<PartialCall> calls;
  const std::string_view open = format.call_open;
  for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
    const ReadCall c = read_call(text, at + open.size(), format, string_args);
    if (!c.named)
      break;
    calls.push_back({id_prefix + std::to_string(calls.size()), c.name, c.arguments, c.whole});
    if (!c.whole)
      break;
    at = c.end;
  }
  return calls;
}

const ordered_json& resolve_local_ref(const ordered_json& prop, const ordered_json& params) {
  const auto ref = prop.is_object() ? prop.find("$ref") : prop.end();
  if (ref == prop.end() || !ref->is_string())
    return prop;
  const std::string r = ref->get<std::string>();
  for (const char* defs : {"$defs", "definitions"}) {
    const std::string prefix = std::string("#/") + defs + "/";
    if (r.rfind(prefix, 0) == 0 && params.contains(defs) && params[defs].is_object() &&
        params[defs].contains(r.substr(prefix.size())))
      return params[defs][r.substr(prefix.size())];
  }
  return prop;
}

bool is_string_schema(const ordered_json& s) {
  if (!s.is_object())
    return false;
  if (s.value("type", ordered_json()) == "string")
    return true;
  if (const auto c = s.find("const"); c != s.end())
    return c->is_string();
  const auto e = s.find("enum");
  return e != s.end() && e->is_array() && !e->empty() &&
         std::all_of(e->begin(), e->end(), [](const ordered_json& v) { return v.is_string(); });
}

StringArgs string_arguments(const std::vector<std::pair<std::string, ordered_json>>& tools) {
  StringArgs out;
  for (const auto& [name, params] : tools) {
    std::set<std::string>& keys = out[name];
    const auto props = params.find("properties");
    if (props != params.end() && props->is_object())
      for (const auto& [key, prop] : props->items())
        if (is_string_schema(resolve_local_ref(prop, params)))
          keys.insert(key);
  }
  return out;
}

} // namespace pshard::server
