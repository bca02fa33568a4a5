// "▁" (U+2581): how SentencePiece vocabularies, and BERT's as llama.cpp's converter
// writes them, spell the space before a word.
//
//   replace_space_markers("\xE2\x96\x81hello")   // " hello"
#pragma once

#include <string>
#include <string_view>

namespace pshard {

inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";
// U+FFFD, what the unknown token shows as.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// `text` with each "▁" a space.
inline std::string replace_space_markers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos, kSpaceMarker.size()) == kSpaceMarker) {
      out.push_back(' ');
      pos += kSpaceMarker.size();
    } else {
      out.push_back(text[pos++]);
    }
  }
  return out;
}

} // namespace pshard
