// Utf8StreamBuffer: byte pieces in, whole characters out.
#include "runtime/tokenizer/utf8.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

TEST(Utf8, SequenceLengths) {
  EXPECT_EQ(utf8_sequence_length('a'), 1u);
  EXPECT_EQ(utf8_sequence_length(0xC3), 2u);
  EXPECT_EQ(utf8_sequence_length(0xE2), 3u);
  EXPECT_EQ(utf8_sequence_length(0xF0), 4u);
  EXPECT_EQ(utf8_sequence_length(0x80), 1u); // stray continuation
  EXPECT_EQ(utf8_sequence_length(0xFF), 1u);
}

TEST(Utf8StreamBuffer, AsciiPassesStraightThrough) {
  Utf8StreamBuffer buffer;
  EXPECT_EQ(buffer.push("hello"), "hello");
  EXPECT_EQ(buffer.pending(), 0u);
}

TEST(Utf8StreamBuffer, HoldsBackAnIncompleteCharacter) {
  Utf8StreamBuffer buffer;
  // "½" = C2 BD, "🚀" = F0 9F 9A 80, arriving a byte at a time.
  EXPECT_EQ(buffer.push("a\xC2"), "a");
  EXPECT_EQ(buffer.pending(), 1u);
  EXPECT_EQ(buffer.push("\xBD"), "\xC2\xBD");
  EXPECT_EQ(buffer.push("\xF0"), "");
  EXPECT_EQ(buffer.push("\x9F"), "");
  EXPECT_EQ(buffer.push("\x9A"), "");
  EXPECT_EQ(buffer.push("\x80!"), "\xF0\x9F\x9A\x80!");
  EXPECT_EQ(buffer.pending(), 0u);
}

TEST(Utf8StreamBuffer, FlushReturnsWhatIsLeft) {
  Utf8StreamBuffer buffer;
  EXPECT_EQ(buffer.push("x\xE2\x96"), "x");
  EXPECT_EQ(buffer.flush(), "\xE2\x96");
  EXPECT_EQ(buffer.pending(), 0u);
}

TEST(Utf8StreamBuffer, MalformedBytesDoNotStall) {
  Utf8StreamBuffer buffer;
  EXPECT_EQ(buffer.push("\x80\x80"), "\x80\x80");
  EXPECT_EQ(buffer.push("\xFF"), "\xFF");
  EXPECT_EQ(buffer.push("\x80\x80\x80\x80\x80"), "\x80\x80\x80\x80\x80");
}

} // namespace
} // namespace pshard
