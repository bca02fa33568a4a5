// Tool calls streamed as OpenAI streams them (ToolCallStream's deltas, partial_calls): in
// every format, fed a few characters at a time, each call's first delta carries its id,
// type and name, and its arguments follow piece by piece; joined, they are the arguments
// of the calls read back whole (JSON without the whitespace outside strings), content
// never carries a call's text, and the array form (ids after arguments) comes whole.
#include "tools/pshard-server/tool_calls.h"

#include <gtest/gtest.h>

namespace pshard::server {
namespace {

using nlohmann::json;

struct Streamed {
  std::string content;
  json calls = json::array(); // joined as a client joins the deltas
  size_t deltas = 0;
  json whole; // the last push's calls
};

Streamed stream(const ToolFormat& format, const std::string& text, size_t chunk = 3) {
  ToolCallStream s(format);
  Streamed out;
  for (size_t at = 0;; at += chunk) {
    const bool last = at + chunk >= text.size();
    ToolCallStream::Piece p = s.push(text.substr(at, chunk), last, "call_");
    out.content += p.content;
    for (const json& d : p.deltas) {
      const size_t i = d["index"].get<size_t>();
      if (i == out.calls.size()) {
        EXPECT_TRUE(d.contains("id") && d.contains("type") && d["function"].contains("name"))
            << "a call's first delta names it: " << d.dump();
        out.calls.push_back({{"id", d["id"]},
                             {"type", d["type"]},
                             {"function", {{"name", d["function"]["name"]}, {"arguments", ""}}}});
      }
      EXPECT_LT(i, out.calls.size()) << "calls come in order";
      if (i >= out.calls.size())
        continue;
      EXPECT_TRUE(!d.contains("id") || i + 1 == out.calls.size()) << "an id once";
      out.calls[i]["function"]["arguments"] =
          out.calls[i]["function"]["arguments"].get<std::string>() +
          d["function"].value("arguments", "");
      ++out.deltas;
    }
    if (last) {
      out.whole = p.calls;
      break;
    }
  }
  return out;
}

TEST(ToolCallStream, HermesCallsStreamTheirArgumentsPieceByPiece) {
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris } \\\" {\", \"days\": [1, 2]}}\n</tool_call>\n<tool_call>\n{\"name\": "
      "\"get_time\", \"arguments\": {\"tz\": \"CET\"}}\n</tool_call>";
  const Streamed s = stream(kHermesTools, text);
  EXPECT_EQ(s.content, "Let me check.");
  ASSERT_EQ(s.calls.size(), 2u);
  EXPECT_EQ(s.calls, s.whole) << "joined, the calls read back whole";
  EXPECT_EQ(s.calls[0]["function"]["arguments"], R"({"city":"Paris } \" {","days":[1,2]})");
  EXPECT_EQ(s.calls[1]["id"], "call_1");
  EXPECT_GT(s.deltas, 8u) << "piece by piece";
}

TEST(ToolCallStream, ANameAfterTheArgumentsWaitsForTheName) {
  const Streamed s = stream(
      kHermesTools, "<tool_call>{\"arguments\": {\"a\": 1}, \"name\": \"f\"}</tool_call>", 2);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls, s.whole);
}

TEST(ToolCallStream, Llama3JsonStreamsItsParameters) {
  const Streamed s =
      stream(kLlama3JsonTools, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\", "
                               "\"unit\": null, \"n\": -1.5e3, \"ok\": true}}");
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0]["function"]["arguments"],
            R"({"city":"Oslo","unit":null,"n":-1.5e3,"ok":true})");
  EXPECT_EQ(json::parse(s.calls[0]["function"]["arguments"].get<std::string>()),
            json::parse(s.whole[0]["function"]["arguments"].get<std::string>()))
      << "the same arguments as read back (which writes the number its own way)";
  EXPECT_GT(s.deltas, 5u);
}

TEST(ToolCallStream, MistralArgsCallsStreamWithTheirOwnIds) {
  const Streamed s = stream(kMistralArgsTools, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"}"
                                               "[TOOL_CALLS]get_time[CALL_ID]a1B2c3D4e[ARGS]{"
                                               "\"tz\": \"UTC\"}");
  ASSERT_EQ(s.calls.size(), 2u);
  EXPECT_EQ(s.calls, s.whole);
  EXPECT_EQ(s.calls[1]["id"], "a1B2c3D4e");
  EXPECT_GT(s.deltas, 4u);
}

TEST(ToolCallStream, TheArrayFormComesWhole) {
  const std::string text = "[TOOL_CALLS] [{\"name\": \"get_time\", \"arguments\": {\"tz\": "
                           "\"UTC\"}, \"id\": \"a1B2c3D4e\"}]";
  const Streamed s = stream(kMistralV3Tools, text);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.deltas, 1u) << "one delta, at the end";
  EXPECT_EQ(s.calls, s.whole);
  EXPECT_EQ(s.calls[0]["id"], "a1B2c3D4e");
}

TEST(ToolCallStream, AHarmonyCallStreamsAfterItsHeader) {
  const Streamed s = stream(kHarmonyTools,
                            "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant"
                            "<|channel|>commentary to=functions.get_weather <|constrain|>json"
                            "<|message|>{\"city\": \"Oslo\", \"unit\": \"c\"}<|call|>");
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls, s.whole);
  EXPECT_GT(s.deltas, 5u);
}

TEST(ToolCallStream, ACallCutOffMidArgumentsSendsWhatCame) {
  // max_tokens ends the answer inside the arguments: what came was sent, no call is made.
  const Streamed s = stream(kHermesTools, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"x");
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0]["function"]["arguments"], "{\"a\":\"x");
  EXPECT_TRUE(s.whole.empty());
}

TEST(ToolCallStream, AnEmptyNameIsStillACall) {
  // The answer read back keeps a call named "" (found by the fuzzer): the stream sends it.
  const Streamed s = stream(kLlama3JsonTools, "{ \"name\": \"\"}", 2);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls, s.whole);
}

TEST(ToolCallStream, PartialCallsKnowOnlyWhatIsWhole) {
  EXPECT_TRUE(partial_calls("<tool_call>{\"name\": \"get_wea", kHermesTools, "c").empty());
  const std::vector<PartialCall> one =
      partial_calls("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": [1, {", kHermesTools, "c");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "f");
  EXPECT_EQ(one[0].arguments, "{\"a\":[1,{");
  EXPECT_FALSE(one[0].whole);
  std::string minified;
  EXPECT_EQ(scan_json_value("{ \"a\" : \" b \" } tail", 0, &minified), 15u);
  EXPECT_EQ(minified, "{\"a\":\" b \"}");
}

} // namespace
} // namespace pshard::server
