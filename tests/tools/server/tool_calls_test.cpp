// The Hermes tool-call format on its own: the tools block and grammar a request makes,
// earlier calls and results rendered into turns, answers read back, the rule renaming
// the grammar is assembled with, and what a stream may send before a call.
#include "tools/pshard-server/tool_calls.h"

#include "pshard/pshard.h"

#include <gtest/gtest.h>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Turn = std::pair<std::string, std::string>;

const ordered_json kWeather = ordered_json::parse(R"({"type": "function", "function": {
  "name": "get_weather", "description": "The weather in a city",
  "parameters": {"type": "object", "required": ["city"],
                 "properties": {"city": {"$ref": "#/$defs/name"}},
                 "$defs": {"name": {"type": "string", "maxLength": 5}}}}})");

TEST(ToolCalls, ARequestListsItsToolsAndMakesAGrammarOfCalls) {
  const ordered_json body = {{"tools", {kWeather}}, {"tool_choice", "required"}};
  std::optional<ToolUse> use;
  ASSERT_FALSE(read_tools(body, kHermesTools, use));
  ASSERT_TRUE(use);
  EXPECT_TRUE(use->from_start);
  EXPECT_NE(use->tools_text.find("<tools>\n" + kWeather.dump() + "\n</tools>"), std::string::npos)
      << use->tools_text;
  EXPECT_NE(use->tools_text.find("<tool_call>\n{\"name\": <function-name>"), std::string::npos);
  EXPECT_EQ(pshard_grammar_validate(use->grammar.c_str()), PSHARD_OK) << use->grammar;
  EXPECT_NE(use->grammar.find("root ::= tool-call ( tool-ws tool-call )*"), std::string::npos);
  EXPECT_NE(use->grammar.find("\"\\\"get_weather\\\"\""), std::string::npos) << use->grammar;
  // The tool's own $defs moved under the combined schema's, its $ref with it.
  EXPECT_NE(use->grammar.find("tool-0-name"), std::string::npos) << use->grammar;

  const ordered_json none = {{"tools", {kWeather}}, {"tool_choice", "none"}};
  ASSERT_FALSE(read_tools(none, kHermesTools, use));
  EXPECT_FALSE(use);
  const ordered_json single = {{"tools", {kWeather}}, {"parallel_tool_calls", false}};
  ASSERT_FALSE(read_tools(single, kHermesTools, use));
  ASSERT_TRUE(use);
  EXPECT_FALSE(use->from_start); // auto: free text until "<tool_call>"
  EXPECT_NE(use->grammar.find("root ::= tool-call\n"), std::string::npos);
}

TEST(ToolCalls, EarlierCallsAndResultsBecomeTurns) {
  const json call = json::parse(R"({"role": "assistant", "content": null, "tool_calls": [
    {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]})");
  auto turn = tool_message(call, "", "messages[1]", kHermesTools);
  ASSERT_TRUE(std::holds_alternative<Turn>(turn));
  const auto [role, content] = std::get<Turn>(turn);
  EXPECT_EQ(role, "assistant");
  EXPECT_EQ(content, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}"
                     "\n</tool_call>");
  auto result = tool_message(json{{"role", "tool"}}, "7 C", "messages[2]", kHermesTools);
  EXPECT_EQ(std::get<Turn>(result).second,
            "<tool_response>\n7 C\n</tool_response>");
  auto bad = tool_message(json::parse(R"({"role": "assistant", "tool_calls": [
    {"function": {"name": "f", "arguments": "{oops"}}]})"),
                          "", "messages[1]", kHermesTools);
  ASSERT_TRUE(std::holds_alternative<ApiError>(bad));
  EXPECT_EQ(std::get<ApiError>(bad).param, "messages[1].tool_calls[0].function.arguments");

  std::vector<Turn> chat = {
      {"system", "Be brief."}, {"user", "Weather?"}, {"assistant", "<tool_call>..."},
      {"tool", "<tool_response>\na\n</tool_response>"},
      {"tool", "<tool_response>\nb\n</tool_response>"}};
  ToolUse use;
  use.tools_text = "# Tools";
  place_tools(chat, &use, kHermesTools);
  ASSERT_EQ(chat.size(), 4u);
  EXPECT_EQ(chat[0].second, "Be brief.\n\n# Tools");
  EXPECT_EQ(chat[3], (Turn{
                         "user", "<tool_response>\na\n</tool_response>\n<tool_response>\nb\n"
                                 "</tool_response>"}));
  std::vector<Turn> bare = {{"user", "Hi"}};
  place_tools(bare, &use, kHermesTools);
  EXPECT_EQ(bare.front(), (Turn{"system", "# Tools"}));
}

TEST(ToolCalls, AnswersAreReadBackIntoContentAndCalls) {
  const ToolAnswer a = parse_tool_answer(
      "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}"
      "\n</tool_call>\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
      "call_x_", kHermesTools);
  EXPECT_EQ(a.content, "Let me look.");
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0]["id"], "call_x_0");
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Rome\"}");
  EXPECT_EQ(a.tool_calls[1]["function"]["arguments"], "{}");
  const ToolAnswer only =
      parse_tool_answer("<tool_call>{\"name\": \"f\"}</tool_call>", "c", kHermesTools);
  EXPECT_TRUE(only.content.is_null());
  EXPECT_EQ(only.tool_calls.size(), 1u);
  // Prose, and a call cut off by max_tokens: content only.
  EXPECT_TRUE(parse_tool_answer("Sunny.", "c", kHermesTools).tool_calls.empty());
  const ToolAnswer cut =
      parse_tool_answer("<tool_call>{\"name\": \"f\", \"argu", "c", kHermesTools);
  EXPECT_TRUE(cut.tool_calls.empty());
  EXPECT_EQ(cut.content, "<tool_call>{\"name\": \"f\", \"argu");
}

TEST(ToolCalls, RenameLeavesLiteralsClassesAndCommentsAlone) {
  const std::string g = "root ::= \"root\" [root] x # root\nx ::= root-2 | root\n";
  EXPECT_EQ(rename_rule(g, "root", "call"),
            "call ::= \"root\" [root] x # root\nx ::= root-2 | call\n");
  EXPECT_EQ(rename_rule("a ::= \"\\\"root\" root", "root", "r"), "a ::= \"\\\"root\" r");
}

TEST(ToolCalls, AStreamHoldsBackWhatMayBeginACall) {
  EXPECT_EQ(streamable_prefix("Hello", kHermesTools), 5u);
  EXPECT_EQ(streamable_prefix("Hello <tool", kHermesTools), 6u);
  EXPECT_EQ(streamable_prefix("Hello <", kHermesTools), 6u);
  EXPECT_EQ(streamable_prefix("a<tool_call>{", kHermesTools), 1u);
  EXPECT_EQ(streamable_prefix("<b>", kHermesTools), 3u);
  // Whitespace before a call is not content: a stream holds it until it knows.
  ToolCallStream s(kHermesTools);
  std::string sent = s.push("Let me look.\r\n", false, "c").content;
  EXPECT_EQ(sent, "Let me look.");
  sent += s.push(" x\n", false, "c").content; // not before a call after all
  EXPECT_EQ(sent, "Let me look.\r\n x");
  ToolCallStream::Piece end = s.push("<tool_call>{\"name\": \"f\"}</tool_call>", true, "c");
  EXPECT_EQ(sent + end.content, parse_tool_answer("Let me look.\r\n x\n<tool_call>{\"name\": "
                                                  "\"f\"}</tool_call>",
                                                  "c", kHermesTools)
                                    .content.get<std::string>());
  EXPECT_EQ(end.calls.size(), 1u);
}

} // namespace
} // namespace pshard::server
