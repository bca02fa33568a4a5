// The formats side by side (tool_format.h): Llama 3.x's JSON calls placed, rendered, read
// back and streamed as Meta's template writes them, and for each format the grammar a
// request makes accepting exactly the calls the format renders — what the model is shown
// is what it may answer.
#include "tests/tools/server/chat_prompt.h"
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
                 "properties": {"city": {"type": "string"}}}}})");

const json kEarlierCall = json::parse(R"({"role": "assistant", "content": null, "tool_calls": [
  {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]})");

std::optional<ToolUse> tools_for(const ToolFormat& format, const char* choice) {
  std::optional<ToolUse> use;
  EXPECT_FALSE(read_tools({{"tools", {kWeather}}, {"tool_choice", choice}}, format, use));
  return use;
}

TEST(ToolFormat, TheTemplateNamesTheFormat) {
  EXPECT_STREQ(tool_format_for("llama3").name, "llama3-json");
  EXPECT_STREQ(tool_format_for("llama4").name, "llama3-json");
  EXPECT_STREQ(tool_format_for("chatml").name, "hermes");
  EXPECT_STREQ(tool_format_for("").name, "hermes");
  EXPECT_STREQ(tool_format_for("mistral-v3").name, "mistral-v3");
  for (const char* t : {"mistral-v3-tekken", "mistral-v7", "mistral-v7-tekken"})
    EXPECT_STREQ(tool_format_for(t).name, "mistral-tekken") << t;
  EXPECT_STREQ(tool_format_for("mistral-v1").name, "hermes"); // no tool tokens
}

TEST(ToolFormat, MistralListsToolsBeforeTheLastUserTurnAndNamesCallsById) {
  auto use = tools_for(kMistralV3Tools, "auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->tools_text, "[AVAILABLE_TOOLS] [" + spaced_dump(kWeather) + "][/AVAILABLE_TOOLS]");
  EXPECT_EQ(use->trigger, "[TOOL_CALLS]");
  std::vector<Turn> chat = {{"system", "Be brief."}, {"user", "Oslo?"}, {"assistant", "call"},
                            {"tool", "7 C"},         {"tool", "rain"},  {"user", "And Rome?"}};
  place_tools(chat, &*use, kMistralV3Tools);
  ASSERT_EQ(chat.size(), 7u);
  EXPECT_EQ(chat[3], (Turn{"tool_results", "7 C"})); // one turn each, not joined
  EXPECT_EQ(chat[4], (Turn{"tool_results", "rain"}));
  EXPECT_EQ(chat[5], (Turn{"available_tools", use->tools_text}));
  EXPECT_EQ(chat[6], (Turn{"user", "And Rome?"}));
  // A system message right before the last user turn opens the same [INST] block: the
  // tools go before both.
  std::vector<Turn> first = {{"system", "Be brief."}, {"user", "Hi"}};
  place_tools(first, &*use, kMistralV3Tools);
  EXPECT_EQ(first[0].first, "available_tools");
  EXPECT_EQ(first[1], (Turn{"system", "Be brief."}));

  // Earlier calls and results carry 9-character ids: OpenAI's are mapped, the same way in
  // the call and in its result; Mistral's own are kept.
  const std::string id = mistral_call_id("1");
  ASSERT_EQ(id.size(), 9u);
  EXPECT_EQ(mistral_call_id("1"), id);
  EXPECT_EQ(mistral_call_id("abcDEF123"), "abcDEF123");
  EXPECT_NE(mistral_call_id("2"), id);
  auto call = tool_message(kEarlierCall, "", "messages[1]", kMistralV3Tools);
  EXPECT_EQ(std::get<Turn>(call).second,
            "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}, "
            "\"id\": \"" +
                id + "\"}]");
  auto result = tool_message(json{{"role", "tool"}, {"tool_call_id", "1"}}, "{\"temp\": 7}",
                             "messages[2]", kMistralTekkenTools);
  EXPECT_EQ(std::get<Turn>(result).second,
            "[TOOL_RESULTS]{\"content\": {\"temp\": 7}, \"call_id\": \"" + id +
                "\"}[/TOOL_RESULTS]");
}

TEST(ToolFormat, MistralCallsAreReadBackWithTheModelsIds) {
  const ToolAnswer a = parse_tool_answer(
      "Checking.[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}, "
      "\"id\": \"abcDEF123\"}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]",
      "c", kMistralTekkenTools);
  EXPECT_EQ(a.content, "Checking.");
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0]["id"], "abcDEF123");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Rome\"}");
  EXPECT_EQ(a.tool_calls[1]["id"], "c1"); // none written: ours
  // Cut off, or not calls: content.
  const std::string cut = "[TOOL_CALLS] [{\"name\": \"get_weather\", \"argu";
  EXPECT_EQ(parse_tool_answer(cut, "c", kMistralV3Tools).content, cut);
  EXPECT_TRUE(parse_tool_answer("[TOOL_CALLS] [1]", "c", kMistralV3Tools).tool_calls.empty());
  EXPECT_EQ(streamable_prefix("Sure [TOOL_", kMistralV3Tools), 5u);
  EXPECT_EQ(streamable_prefix("Sure [x]", kMistralV3Tools), 8u);
}

// Small 3.2 and later (a vocabulary with [ARGS]): the tools as Tekken's, each call its
// name and [ARGS] after its own [TOOL_CALLS], no ids written, results their content alone.
TEST(ToolFormat, MistralArgsCallsAreRenderedAndReadBack) {
  EXPECT_STREQ(tool_format_for("mistral-v7-tekken", true).name, "mistral-args");
  EXPECT_STREQ(tool_format_for("mistral-v3-tekken", true).name, "mistral-args");
  EXPECT_STREQ(tool_format_for("mistral-v7-tekken", false).name, "mistral-tekken");
  EXPECT_STREQ(tool_format_for("chatml", true).name, "hermes");
  auto use = tools_for(kMistralArgsTools, "auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->trigger, "[TOOL_CALLS]");
  EXPECT_EQ(use->tools_text.rfind("[AVAILABLE_TOOLS][{\"type\": \"function\"", 0), 0u);
  json two = kEarlierCall;
  two["tool_calls"].push_back(two["tool_calls"][0]);
  two["tool_calls"][1]["function"]["arguments"] = "{}";
  auto call = tool_message(two, "", "messages[1]", kMistralArgsTools);
  EXPECT_EQ(std::get<Turn>(call).second,
            "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"}[TOOL_CALLS]get_weather[ARGS]{}");
  auto result = tool_message({{"role", "tool"}, {"tool_call_id", "1"}, {"content", "12 C"}}, "12 C",
                             "messages[2]", kMistralArgsTools);
  EXPECT_EQ(std::get<Turn>(result).second, "[TOOL_RESULTS]12 C[/TOOL_RESULTS]");

  const ToolAnswer a = parse_tool_answer(
      "Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Rome\"}\n[TOOL_CALLS]get_weather"
      "[CALL_ID]abcDEF123[ARGS]{\"city\": \"Oslo\"}",
      "c", kMistralArgsTools);
  EXPECT_EQ(a.content, "Checking.");
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0]["id"], "c0"); // none written: ours
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Rome\"}");
  EXPECT_EQ(a.tool_calls[1]["id"], "abcDEF123"); // the model's own
  // Cut off: the whole calls before stay; none whole, the text is content.
  const std::string cut = "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Ro";
  EXPECT_EQ(parse_tool_answer(cut, "c", kMistralArgsTools).content, cut);
  EXPECT_EQ(parse_tool_answer("[TOOL_CALLS]get_weath", "c", kMistralArgsTools).content,
            "[TOOL_CALLS]get_weath");
  EXPECT_EQ(parse_tool_answer("[TOOL_CALLS]f[ARGS]{}[TOOL_CALLS]g[ARGS]{", "c", kMistralArgsTools)
                .tool_calls.size(),
            1u);
  EXPECT_TRUE(parse_tool_answer("[TOOL_CALLS][ARGS]{}", "c", kMistralArgsTools).tool_calls.empty());
  EXPECT_EQ(streamable_prefix("Sure [TOOL_", kMistralArgsTools), 5u);
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

// Llama 4's template lists the tools in the first user message with Llama 3.1's words and
// renders results under an ipython header: through the llama4 template, the prompt.
TEST(ToolFormat, Llama4TakesLlama3sJsonCallsThroughItsOwnHeaders) {
  auto use = tools_for(tool_format_for("llama4"), "auto");
  ASSERT_TRUE(use);
  std::vector<Turn> chat = {{"user", "Weather in Oslo?"}};
  chat.push_back(std::get<Turn>(tool_message(kEarlierCall, "", "messages[1]", kLlama3JsonTools)));
  chat.push_back(
      std::get<Turn>(tool_message(json{{"role", "tool"}}, "7 C", "messages[2]", kLlama3JsonTools)));
  place_tools(chat, &*use, kLlama3JsonTools);
  EXPECT_EQ(rendered_prompt("llama4", chat),
            "<|header_start|>system<|header_end|>\n\nEnvironment: ipython<|eot|>"
            "<|header_start|>user<|header_end|>\n\n" +
                use->tools_text + "Weather in Oslo?<|eot|>" +
                "<|header_start|>assistant<|header_end|>\n\n" + chat[2].second + "<|eot|>" +
                "<|header_start|>ipython<|header_end|>\n\n7 C<|eot|>" +
                "<|header_start|>assistant<|header_end|>\n\n");
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
  for (const ToolFormat* format : {&kHermesTools, &kLlama3JsonTools, &kMistralV3Tools,
                                   &kMistralTekkenTools, &kMistralArgsTools}) {
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
    if (format->calls_form != CallsForm::kNamedArgs) { // its arguments have no key
      EXPECT_FALSE(grammar_matches(use->grammar,
                                   replaced(key, key == "arguments" ? "parameters" : "arguments")));
    }
    EXPECT_FALSE(grammar_matches(use->grammar, replaced("get_weather", "get_other")));
    EXPECT_FALSE(grammar_matches(use->grammar, replaced("city", "town"))); // its schema's
  }
  // Mistral's ids are 9 letters and digits; two calls are one array.
  auto mistral = tools_for(kMistralTekkenTools, "required");
  const std::string one =
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}, \"id\": ";
  EXPECT_TRUE(grammar_matches(mistral->grammar, "[TOOL_CALLS][" + one + "\"abcDEF123\"}, " + one +
                                                    "\"x23456789\"}]"));
  EXPECT_FALSE(grammar_matches(mistral->grammar, "[TOOL_CALLS][" + one + "\"abc\"}]"));
  EXPECT_FALSE(grammar_matches(mistral->grammar, "[TOOL_CALLS][" + one + "\"abcDEF12_\"}]"));
  // Mistral's [ARGS] calls: one after another, the model's own id allowed before [ARGS].
  auto args = tools_for(kMistralArgsTools, "required");
  const std::string call = "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"}";
  EXPECT_TRUE(grammar_matches(args->grammar, call + call));
  EXPECT_TRUE(grammar_matches(args->grammar,
                              "[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{\"city\": \"x\"}"));
  EXPECT_FALSE(grammar_matches(args->grammar, "[TOOL_CALLS]get_weather[CALL_ID]abc[ARGS]{}"));
  EXPECT_FALSE(grammar_matches(args->grammar, "[TOOL_CALLS]get_weather{\"city\": \"x\"}"));
  // Each tool's rules apart (both have a root, a space, ...), counted repetitions kept.
  std::optional<ToolUse> ranged;
  ASSERT_FALSE(read_tools(ordered_json::parse(R"({"tools": [{"type": "function", "function": {
      "name": "f", "parameters": {"type": "object", "required": ["x"], "properties": {
      "x": {"type": "integer", "minimum": 3, "maximum": 120}}}}}, {"type": "function",
      "function": {"name": "g", "parameters": {"type": "object", "properties": {
      "y": {"type": "string", "maxLength": 3}}}}}]})"),
                          kMistralArgsTools, ranged));
  EXPECT_TRUE(grammar_matches(ranged->grammar, "[TOOL_CALLS]f[ARGS]{\"x\": 120}"));
  EXPECT_FALSE(grammar_matches(ranged->grammar, "[TOOL_CALLS]f[ARGS]{\"x\": 121}"));
  EXPECT_TRUE(grammar_matches(ranged->grammar, "[TOOL_CALLS]g[ARGS]{\"y\": \"abc\"}"));
  EXPECT_FALSE(grammar_matches(ranged->grammar, "[TOOL_CALLS]g[ARGS]{\"y\": \"abcd\"}"));
  EXPECT_FALSE(grammar_matches(ranged->grammar, "[TOOL_CALLS]g[ARGS]{\"x\": 5}"));
  // Llama 3's calls come one a turn.
  auto two = tools_for(kLlama3JsonTools, "auto");
  EXPECT_EQ(two->grammar.find("( tool-ws tool-call )*"), std::string::npos);
}

} // namespace
} // namespace pshard::server
