#include "runtime/tokenizer/ugm_normalizer.h"

#include "runtime/tokenizer/space_marker.h"
#include "runtime/tokenizer/utf8.h"

namespace pshard {

CharsmapMatch UgmNormalizer::normalize_prefix(std::string_view text) const {
  if (const CharsmapMatch rule = charsmap_.longest_match(text); rule.consumed > 0)
    return rule;
  size_t length = 0;
  decode_utf8(text, 0, &length);
  if (length == 0) // malformed: SentencePiece consumes one byte and shows U+FFFD
    return {kReplacementCharacter, 1};
  return {text.substr(0, length), length};
}

std::string UgmNormalizer::normalize(std::string_view text) const {
  std::string out;
  if (text.empty())
    return out;
  out.reserve(text.size() + text.size() / 2 + kSpaceMarker.size());
  if (options_.dummy_prefix)
    out.append(kSpaceMarker);
  // True at the start too: leading spaces go when extra whitespace is removed.
  bool after_space = options_.remove_extra_whitespaces;
  for (size_t pos = 0; pos < text.size();) {
    const CharsmapMatch step = normalize_prefix(text.substr(pos));
    pos += step.consumed;
    std::string_view piece = step.replacement;
    if (options_.remove_extra_whitespaces && after_space)
      while (!piece.empty() && piece.front() == ' ')
        piece.remove_prefix(1);
    if (piece.empty())
      continue;
    for (char c : piece) {
      if (c == ' ')
        out.append(kSpaceMarker);
      else
        out.push_back(c);
    }
    after_space = piece.back() == ' ';
  }
  if (options_.remove_extra_whitespaces)
    while (out.ends_with(kSpaceMarker))
      out.resize(out.size() - kSpaceMarker.size());
  return out;
}

} // namespace pshard
