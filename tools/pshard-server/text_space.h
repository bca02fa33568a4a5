// The whitespace the server's answer parsers (tool calls, their streams, thoughts) pass
// over between the parts of a model's text: ASCII only, as the formats they read write it.
#pragma once

#include <cstddef>
#include <string_view>

namespace pshard::server {

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The first position at or after `at` that is not whitespace (or the text's size).
inline size_t skip_space(std::string_view text, size_t at = 0) {
  while (at < text.size() && is_space(text[at]))
    ++at;
  return at;
}

inline std::string_view trim_space(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

} // namespace pshard::server
