// TextStream: whole characters only, stop strings cut and never shown in part.
#include "runtime/serve/text_stream.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

std::string shown(TextStream& s, const std::vector<std::string>& pieces, bool* stopped = nullptr) {
  std::string out;
  for (const std::string& p : pieces) {
    TextStream::Piece piece = s.push(p);
    out += piece.text;
    if (stopped)
      *stopped = *stopped || piece.stopped;
  }
  return out + s.flush();
}

TEST(TextStream, HoldsASplitCharacterUntilItIsWhole) {
  TextStream s;
  EXPECT_EQ(s.push("a\xC2").text, "a");
  EXPECT_EQ(s.push("\xBD").text, "\xC2\xBD");
  EXPECT_EQ(s.push("\xE2\x82").text, "");
  EXPECT_EQ(s.flush(), "\xE2\x82") << "the end gives back what never completed";
}

TEST(TextStream, CutsAtTheFirstStopStringAcrossPieces) {
  TextStream s({"END", "\n\n"});
  bool stopped = false;
  EXPECT_EQ(shown(s, {"once ", "upon\n", "\nEN", "D more"}, &stopped), "once upon");
  EXPECT_TRUE(stopped);
  EXPECT_TRUE(s.push("later").text.empty()) << "nothing after a stop";
}

TEST(TextStream, SaysWhichStopStringEndedIt) {
  TextStream first({"xyz", "b", "ab"});
  TextStream::Piece p = first.push("..ab..");
  EXPECT_TRUE(p.stopped);
  EXPECT_EQ(p.stop_index, 2) << "\"ab\" begins before \"b\"";
  EXPECT_EQ(p.text, "..");
  TextStream tie({"ab", "a"});
  EXPECT_EQ(tie.push("xab").stop_index, 0) << "at one place, the first listed";
  TextStream none({"q"});
  EXPECT_EQ(none.push("abc").stop_index, -1);
}

TEST(TextStream, HoldsOnlyWhatCouldStillBecomeAStopString) {
  TextStream s({"<end>"});
  EXPECT_EQ(s.push("a <e").text, "a ");
  EXPECT_EQ(s.push("x").text, "<ex") << "not a stop after all: shown whole";
  EXPECT_EQ(s.push("<en").text, "");
  EXPECT_EQ(s.flush(), "<en") << "a partial stop at the end is text";
}

TEST(TextStream, AStopStringInsideOnePieceAndOfManyBytes) {
  TextStream s({"½"});
  bool stopped = false;
  EXPECT_EQ(shown(s, {"x\xC2", "\xBD", "y"}, &stopped), "x");
  EXPECT_TRUE(stopped);
}

} // namespace
} // namespace pshard
