// Harmony function calling (gpt-oss; harmony_tools.cpp): the tools as the published
// template's TypeScript declarations in the developer message, earlier calls and results
// as its messages, the system note, answers read back (calls, the final channel, a
// preamble, either header order, a cut-off call), the grammar of a call in both header
// orders, and streaming that sends the final channel as it comes.
#include "tests/tools/server/grammar_match.h"
#include "tools/pshard-server/tool_calls.h"

#include <gtest/gtest.h>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Turn = std::pair<std::string, std::string>;

const ordered_json kWeather = ordered_json::parse(R"({"type": "function", "function": {
  "name": "get_weather", "description": "The weather in a city",
  "parameters": {"type": "object", "required": ["city"],
                 "properties": {"city": {"type": "string", "description": "Its name"}}}}})");

std::optional<ToolUse> harmony_tools(const ordered_json& tools, const char* choice) {
  std::optional<ToolUse> use;
  EXPECT_FALSE(read_tools({{"tools", tools}, {"tool_choice", choice}}, kHarmonyTools, use));
  return use;
}

TEST(HarmonyTools, GptOssTemplateUsesHarmony) {
  EXPECT_STREQ(tool_format_for("gpt-oss").name, "harmony");
}

TEST(HarmonyTools, ToolsAreTypeScriptDeclarationsInTheDeveloperMessage) {
  auto use = harmony_tools(ordered_json::array({kWeather}), "auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->tools_text, "# Tools\n\n## functions\n\nnamespace functions {\n\n"
                             "// The weather in a city\n"
                             "type get_weather = (_: {\n"
                             "// Its name\n"
                             "city: string,\n"
                             "}) => any;\n\n"
                             "} // namespace functions");
  EXPECT_EQ(use->trigger, "to=functions.");
  // Each type the template names: enums with their default, optional numbers, arrays,
  // nested objects, nullable strings, unions; a tool without parameters.
  const ordered_json rich = ordered_json::parse(R"([{"type": "function", "function": {
    "name": "search", "description": "Finds things",
    "parameters": {"type": "object", "required": ["q"], "properties": {
      "q": {"type": "string"},
      "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
      "limit": {"type": "integer", "default": 10},
      "tags": {"type": "array", "items": {"type": "string"}},
      "where": {"type": "object", "required": ["lat"],
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}},
      "note": {"type": "string", "nullable": true},
      "id": {"type": ["string", "integer"]}}}}},
    {"type": "function", "function": {"name": "now", "description": "The time"}}])");
  auto r = harmony_tools(rich, "auto");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tools_text, "# Tools\n\n## functions\n\nnamespace functions {\n\n"
                           "// Finds things\n"
                           "type search = (_: {\n"
                           "q: string,\n"
                           "unit?: \"c\" | \"f\", // default: c,\n"
                           "limit?: number, // default: 10,\n"
                           "tags?: string[],\n"
                           "where?: {\nlat: number, lon?: number},\n"
                           "note?: string | null,\n"
                           "id?: string | integer,\n"
                           "}) => any;\n\n"
                           "// The time\n"
                           "type now = () => any;\n\n"
                           "} // namespace functions");

  // After the client's system message (the developer's instructions), or a developer
  // message of their own.
  std::vector<Turn> with = {{"system", "Be brief."}, {"user", "Oslo?"}};
  place_tools(with, &*use, kHarmonyTools);
  ASSERT_EQ(with.size(), 2u);
  EXPECT_EQ(with[0], (Turn{"system", "Be brief.\n\n" + use->tools_text}));
  std::vector<Turn> without = {{"user", "Oslo?"}};
  place_tools(without, &*use, kHarmonyTools);
  ASSERT_EQ(without.size(), 2u);
  EXPECT_EQ(without[0],
            (Turn{"harmony", "<|start|>developer<|message|>\n\n" + use->tools_text + "<|end|>"}));
  // The system message says where calls go.
  std::string prompt = "<|start|>system<|message|>Reasoning: medium\n\n# Valid channels: "
                       "analysis, commentary, final. Channel must be included for every "
                       "message.<|end|>";
  kHarmonyTools.after_render(prompt);
  EXPECT_NE(prompt.find("every message.\nCalls to these tools must go to the commentary "
                        "channel: 'functions'.<|end|>"),
            std::string::npos)
      << prompt;
}

TEST(HarmonyTools, EarlierCallsAndResultsAreHarmonyMessages) {
  CallNames names;
  const json call = json::parse(R"({"role": "assistant", "content": "", "tool_calls": [
    {"id": "c7", "type": "function",
     "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]})");
  auto turn = tool_message(call, "", "messages[1]", kHarmonyTools, &names);
  EXPECT_EQ(std::get<Turn>(turn),
            (Turn{"harmony", "<|start|>assistant to=functions.get_weather<|channel|>commentary "
                             "json<|message|>{\"city\": \"Oslo\"}<|call|>"}));
  // Text beside the calls is their analysis.
  auto thought = tool_message(call, "Looking it up.", "messages[1]", kHarmonyTools, &names);
  EXPECT_EQ(std::get<Turn>(thought).second.rfind("<|start|>assistant<|channel|>analysis<|message|>"
                                                 "Looking it up.<|end|><|start|>assistant to=",
                                                 0),
            0u);
  // The result names the function of the call it answers (by id; a JSON string).
  auto result = tool_message(json{{"role", "tool"}, {"tool_call_id", "c7"}}, "7 \"C\"",
                             "messages[2]", kHarmonyTools, &names);
  EXPECT_EQ(std::get<Turn>(result),
            (Turn{"tool", "<|start|>functions.get_weather to=assistant<|channel|>commentary"
                          "<|message|>\"7 \\\"C\\\"\"<|end|>"}));
  std::vector<Turn> chat = {std::get<Turn>(turn), std::get<Turn>(result)};
  place_tools(chat, nullptr, kHarmonyTools);
  EXPECT_EQ(chat[1].first, "harmony");
}

TEST(HarmonyTools, AnswersAreReadBackAsMessages) {
  // A call on the commentary channel ends the answer (<|call|> stops generation).
  ToolAnswer a = parse_tool_answer("<|channel|>commentary to=functions.get_weather "
                                   "<|constrain|>json<|message|>{\"city\": \"Paris\"}",
                                   "call_", kHarmonyTools);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_TRUE(a.content.is_null());
  EXPECT_EQ(a.tool_calls[0]["id"], "call_0");
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Paris\"}");
  // The recipient before the channel, and a preamble to the user first.
  a = parse_tool_answer("<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant "
                        "to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": "
                        "\"Rome\"}",
                        "call_", kHarmonyTools);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.content, "Checking.");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Rome\"}");
  // The final channel is the content.
  a = parse_tool_answer("<|channel|>final<|message|>It is sunny.", "call_", kHarmonyTools);
  EXPECT_TRUE(a.tool_calls.empty());
  EXPECT_EQ(a.content, "It is sunny.");
  // A call cut off (max_tokens) is no call.
  a = parse_tool_answer("<|channel|>commentary to=functions.get_weather <|constrain|>json"
                        "<|message|>{\"ci",
                        "call_", kHarmonyTools);
  EXPECT_TRUE(a.tool_calls.empty());
}

TEST(HarmonyTools, TheGrammarTakesACallInEitherHeaderOrder) {
  auto required = harmony_tools(ordered_json::array({kWeather}), "required");
  auto automatic = harmony_tools(ordered_json::array({kWeather}), "auto");
  ASSERT_TRUE(required && automatic);
  const std::string args = "<|message|>{\"city\": \"Oslo\"}";
  EXPECT_TRUE(
      grammar_matches(required->grammar,
                      "<|channel|>commentary to=functions.get_weather <|constrain|>json" + args));
  EXPECT_TRUE(
      grammar_matches(automatic->grammar, "to=functions.get_weather <|constrain|>json" + args));
  EXPECT_TRUE(grammar_matches(automatic->grammar,
                              "to=functions.get_weather<|channel|>commentary json" + args));
  EXPECT_TRUE(grammar_matches(automatic->grammar, "to=functions.get_weather" + args));
  EXPECT_FALSE(
      grammar_matches(automatic->grammar, "to=functions.get_other <|constrain|>json" + args));
  EXPECT_FALSE(grammar_matches(automatic->grammar,
                               "to=functions.get_weather <|constrain|>json<|message|>{\"town\": "
                               "\"Oslo\"}"));
  EXPECT_FALSE(grammar_matches(required->grammar, "to=functions.get_weather" + args))
      << "from the first token, the channel comes first";
}

TEST(HarmonyTools, TheFinalChannelStreamsAndCallsComeWhole) {
  ToolCallStream s(kHarmonyTools);
  EXPECT_EQ(s.push("<|channel|>fin", false, "c").content, "");
  EXPECT_EQ(s.push("al<|message|>It is", false, "c").content, "It is");
  ToolCallStream::Piece last = s.push(" sunny.", true, "c");
  EXPECT_EQ(last.content, " sunny.");
  EXPECT_TRUE(last.calls.empty());

  ToolCallStream call(kHarmonyTools);
  EXPECT_EQ(call.push("<|channel|>commentary to=functions.get_weather", false, "c").content, "");
  EXPECT_EQ(call.push(" <|constrain|>json<|message|>{\"city\": \"Oslo\"}", false, "c").content, "");
  last = call.push("", true, "c");
  EXPECT_EQ(last.content, "");
  ASSERT_EQ(last.calls.size(), 1u);
  EXPECT_EQ(last.calls[0]["function"]["name"], "get_weather");
}

} // namespace
} // namespace pshard::server
