// GPT-2's byte-level alphabet: a bijection between the 256 bytes and 256
// printable code points, with the printable Latin-1 bytes standing for
// themselves.
#include "runtime/tokenizer/byte_unicode.h"

#include <gtest/gtest.h>
#include <set>

namespace pshard {
namespace {

TEST(ByteUnicode, EveryByteHasItsOwnCodePointAndBack) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = byte_level_code_point(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second)
        << "byte " << b << " shares code point " << static_cast<uint32_t>(cp);
    EXPECT_EQ(byte_of_code_point(cp), b);
  }
  EXPECT_EQ(seen.size(), 256u);
}

TEST(ByteUnicode, PrintableLatin1StandsForItselfTheRestMovesPast0x100) {
  EXPECT_EQ(byte_level_code_point('A'), U'A');
  EXPECT_EQ(byte_level_code_point('~'), U'~');
  EXPECT_EQ(byte_level_code_point(0xE9), U'\u00E9');
  EXPECT_EQ(byte_level_code_point(0), U'\u0100');
  EXPECT_EQ(byte_level_code_point(' '), U'\u0120');  // "Ġ"
  EXPECT_EQ(byte_level_code_point('\n'), U'\u010A'); // "Ċ"
  EXPECT_EQ(byte_level_code_point(0xAD), U'\u0143'); // the soft hyphen is the last one moved
  EXPECT_EQ(byte_of_code_point(U'\u0144'), -1);
  EXPECT_EQ(byte_of_code_point(U'\u3042'), -1);
}

TEST(ByteUnicode, TextRoundTripsIncludingInvalidUtf8) {
  const std::string bytes("a \n\xC3\xA9\xFF\x00z", 8);
  std::string level;
  append_byte_level(bytes, level);
  EXPECT_EQ(level, "a\u0120\u010A\u00C3\u00A9\u00FF\u0100z");
  std::string back;
  EXPECT_TRUE(append_from_byte_level(level, back));
  EXPECT_EQ(back, bytes);
}

TEST(ByteUnicode, CharactersOutsideTheAlphabetAreCopiedAndReported) {
  std::string out;
  EXPECT_FALSE(append_from_byte_level("\u0120\u3042\xFF", out));
  EXPECT_EQ(out, " \u3042\xFF");
}

} // namespace
} // namespace pshard
