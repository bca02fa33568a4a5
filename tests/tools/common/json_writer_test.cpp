#include "tools/common/json_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace pshard {
namespace {

std::string escaped(std::string_view s) {
  std::ostringstream out;
  JsonWriter::write_escaped(out, s);
  return out.str();
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(escaped("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
}

TEST(JsonWriter, KeepsWellFormedUtf8) {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"; // é € 😀
  EXPECT_EQ(escaped(text), "\"" + text + "\"");
}

// Generated text may stop inside a character spelled by byte-fallback tokens; the JSON
// must stay valid UTF-8, so each malformed byte becomes U+FFFD.
TEST(JsonWriter, ReplacesMalformedUtf8) {
  EXPECT_EQ(escaped("a\xA8z"), "\"a\\ufffdz\"");             // stray continuation
  EXPECT_EQ(escaped("\xE2\x82"), "\"\\ufffd\\ufffd\"");       // truncated at the end
  EXPECT_EQ(escaped("\xC0\xAF"), "\"\\ufffd\\ufffd\"");       // overlong '/'
  EXPECT_EQ(escaped("\xED\xA0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); // a surrogate
  EXPECT_EQ(escaped("\xF4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); // > U+10FFFF
  EXPECT_EQ(escaped("\xE2\x82x"), "\"\\ufffd\\ufffdx\"");     // cut by an ASCII byte
}

TEST(JsonWriter, WritesNestedValues) {
  std::ostringstream out;
  JsonWriter j(out, /*pretty=*/false);
  j.begin_object();
  j.key("ids").begin_array(true).value(int64_t{1}).value(int64_t{2}).end_array();
  j.key("x").value(0.5);
  j.key("bad").value(1.0 / 0.0);
  j.end_object();
  EXPECT_EQ(out.str(), "{\"ids\":[1,2],\"x\":0.5,\"bad\":null}");
}

} // namespace
} // namespace pshard
