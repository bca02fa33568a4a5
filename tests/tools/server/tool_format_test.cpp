// The formats side by side (tool_format.h): Llama 3.x's JSON calls placed, rendered, read
// back and streamed as Meta's template writes them, and for each format the grammar a
// request makes accepting exactly the calls the format renders — what the model is shown
// is what it may answer.
#include "runtime/grammar/grammar.h"
#include "runtime/grammar/grammar_matcher.h"
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
                 "properties": {"city": {"type": "string"}}}}})");

const json kEarlierCall = json::parse(R"({"role": "assistant", "content": null, "tool_calls": [
  {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]})");

std::optional<ToolUse> tools_for(const ToolFormat& format, const char* choice) {
  std::optional<ToolUse> use;
  EXPECT_FALSE(read_tools({{"tools", {kWeather}}, {"tool_choice", choice}}, format, use));
  return use;
}

// Whether the tool grammar matches `text` whole.
bool grammar_matches(const std::string& gbnf, const std::string& text) {
  auto g = parse_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok())
    return false;
  GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
  return m.accept(text) && m.can_end();
}

TEST(ToolFormat, TheTemplateNamesTheFormat) {
  EXPECT_STREQ(tool_format_for("llama3").name, "llama3-json");
  EXPECT_STREQ(tool_format_for("chatml").name, "hermes");
  EXPECT_STREQ(tool_format_for("").name, "hermes");
}

TEST(ToolFormat, Llama3ListsToolsInTheFirstUserMessageUnderIpython) {
  auto use = tools_for(kLlama3JsonTools, "auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->tools_text.rfind("Given the following functions", 0), 0u) << use->tools_text;
  EXPECT_NE(use->tools_text.find("\"parameters\": dictionary of argument name"), std::string::npos);
  EXPECT_NE(use->tools_text.find(kWeather.dump(4) + "\n\n"), std::string::npos);

  std::vector<Turn> chat = {{"user", "Weather in Oslo?"},
                            {"assistant", "call"},
                            {"tool", "7 C"},
                            {"tool", "rain"},
                            {"user", "And Rome?"}};
  place_tools(chat, &*use, kLlama3JsonTools);
  ASSERT_EQ(chat.size(), 6u);
  EXPECT_EQ(chat[0], (Turn{"system", "Environment: ipython\n"}));
  EXPECT_EQ(chat[1].second, use->tools_text + "Weather in Oslo?");
  // Results are one ipython turn each, not joined; later user turns are left alone.
  EXPECT_EQ(chat[3], (Turn{"ipython", "7 C"}));
  EXPECT_EQ(chat[4], (Turn{"ipython", "rain"}));
  EXPECT_EQ(chat[5], (Turn{"user", "And Rome?"}));

  std::vector<Turn> with_system = {{"system", "Be brief."}, {"user", "Hi"}};
  place_tools(with_system, &*use, kLlama3JsonTools);
  EXPECT_EQ(with_system[0].second, "Environment: ipython\nBe brief.");
}

TEST(ToolFormat, Llama3RendersAndReadsBackBareJsonCalls) {
  auto turn = tool_message(kEarlierCall, "", "messages[1]", kLlama3JsonTools);
  ASSERT_TRUE(std::holds_alternative<Turn>(turn));
  // As Meta's template writes it (Jinja's tojson separators).
  EXPECT_EQ(std::get<Turn>(turn).second,
            "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
  auto result = tool_message(json{{"role", "tool"}}, "7 C", "messages[2]", kLlama3JsonTools);
  EXPECT_EQ(std::get<Turn>(result), (Turn{"tool", "7 C"}));

  const ToolAnswer a = parse_tool_answer(
      "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}", "c", kLlama3JsonTools);
  EXPECT_TRUE(a.content.is_null());
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Rome\"}");
  // Spaced as a grammar-led answer (tool_choice "required") may write it.
  const ToolAnswer spaced =
      parse_tool_answer("{ \"name\" : \"get_weather\" ,\"parameters\" : { \"city\" : \"Rome\" } }",
                        "c", kLlama3JsonTools);
  ASSERT_EQ(spaced.tool_calls.size(), 1u);
  EXPECT_EQ(spaced.tool_calls[0]["function"]["arguments"], "{\"city\":\"Rome\"}");
  // Prose, prose with braces, and a call cut off by max_tokens are content.
  EXPECT_TRUE(parse_tool_answer("Sunny {really}.", "c", kLlama3JsonTools).tool_calls.empty());
  const ToolAnswer cut =
      parse_tool_answer("{\"name\": \"get_weather\", \"para", "c", kLlama3JsonTools);
  EXPECT_TRUE(cut.tool_calls.empty());
  EXPECT_EQ(cut.content, "{\"name\": \"get_weather\", \"para");

  EXPECT_EQ(streamable_prefix("It is {", kLlama3JsonTools), 6u);
  EXPECT_EQ(streamable_prefix("It is {\"na", kLlama3JsonTools), 6u);
  EXPECT_EQ(streamable_prefix("{\"name\": \"g", kLlama3JsonTools), 0u);
  EXPECT_EQ(streamable_prefix("{x}", kLlama3JsonTools), 3u);
  EXPECT_EQ(streamable_prefix("ok { \n \"na", kLlama3JsonTools), 3u);
  EXPECT_EQ(streamable_prefix("{ x", kLlama3JsonTools), 3u);
}

TEST(ToolFormat, EachGrammarAcceptsTheCallsItsFormatRenders) {
  for (const ToolFormat* format : {&kHermesTools, &kLlama3JsonTools}) {
    SCOPED_TRACE(format->name);
    auto use = tools_for(*format, "required");
    ASSERT_TRUE(use);
    auto turn = tool_message(kEarlierCall, "", "messages[1]", *format);
    const std::string rendered = std::get<Turn>(turn).second;
    EXPECT_TRUE(grammar_matches(use->grammar, rendered)) << rendered << "\n" << use->grammar;
    // The trigger of tool_choice "auto" begins every sentence (the runtime refuses one
    // that does not).
    auto g = parse_gbnf(use->grammar);
    ASSERT_TRUE(g.ok());
    GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
    EXPECT_TRUE(m.accept(format->call_open));
    // The other format's key, and an unlisted function, are refused.
    auto replaced = [&](const std::string& from, const std::string& to) {
      return std::string(rendered).replace(rendered.find(from), from.size(), to);
    };
    const std::string key = format->args_key;
    EXPECT_FALSE(grammar_matches(use->grammar,
                                 replaced(key, key == "arguments" ? "parameters" : "arguments")));
    EXPECT_FALSE(grammar_matches(use->grammar, replaced("get_weather", "get_other")));
  }
  // Llama 3's calls come one a turn.
  auto two = tools_for(kLlama3JsonTools, "auto");
  EXPECT_EQ(two->grammar.find("( tool-ws tool-call )*"), std::string::npos);
}

} // namespace
} // namespace pshard::server
