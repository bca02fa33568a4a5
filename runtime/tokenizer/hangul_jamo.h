// The canonical decomposition of a precomposed Hangul syllable (U+AC00..U+D7A3) into
// conjoining jamo, by the Unicode Standard's arithmetic (section 3.12, "Conjoining Jamo
// Behavior") rather than a table: a leading consonant, a vowel and, unless the
// syllable's index is a multiple of 28, a trailing consonant.
//
//   char32_t jamo[3];
//   int n = hangul_jamo(U'\uD55C', jamo);   // 3: U+1112 U+1161 U+11AB
#pragma once

namespace pshard {

inline constexpr char32_t kHangulSyllableFirst = 0xAC00;
inline constexpr char32_t kHangulSyllableLast = 0xD7A3;

constexpr bool is_hangul_syllable(char32_t c) {
  return c >= kHangulSyllableFirst && c <= kHangulSyllableLast;
}

// `syllable` must be a Hangul syllable; returns how many of jamo[0..2] it filled.
constexpr int hangul_jamo(char32_t syllable, char32_t (&jamo)[3]) {
  constexpr char32_t kVowels = 21, kTrailing = 28; // trailing 0 is "none"
  const char32_t index = syllable - kHangulSyllableFirst;
  jamo[0] = 0x1100 + index / (kVowels * kTrailing);
  jamo[1] = 0x1161 + (index % (kVowels * kTrailing)) / kTrailing;
  jamo[2] = 0x11A7 + index % kTrailing;
  return index % kTrailing == 0 ? 2 : 3;
}

} // namespace pshard
