// GLM-4.5's function calling (glm_tools.cpp): the tools block and where it goes, earlier
// calls and results as the published template writes them (checked through the glm-4.5
// chat template against the prompt the template renders), answers read back (string
// arguments raw, the others JSON; a cut-off call), the grammar of a call (listed keys in
// order, each once, the required ones; a string value without "</arg_value>", others by
// their schema) and streaming.
#include "tests/tools/server/chat_prompt.h"
#include "tests/tools/server/grammar_match.h"
#include "tests/tools/server/streamed_calls.h"
#include "tools/pshard-server/tool_calls.h"

#include <gtest/gtest.h>

namespace pshard::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Turn = std::pair<std::string, std::string>;

const ordered_json kTools = ordered_json::parse(R"([{"type": "function", "function": {
  "name": "get_weather", "description": "The weather in a city",
  "parameters": {"type": "object", "required": ["city"], "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"},
    "unit": {"type": "string", "enum": ["c", "f"]}}}}},
  {"type": "function", "function": {"name": "now"}}])");

std::optional<ToolUse> glm_tools(const char* choice) {
  std::optional<ToolUse> use;
  EXPECT_FALSE(read_tools({{"tools", kTools}, {"tool_choice", choice}}, kGlmXmlTools, use));
  return use;
}

TEST(GlmTools, TheGlm45TemplateCallsInXmlAndGlm4IsRefusedByName) {
  EXPECT_STREQ(tool_format_for("glm-4.5").name, "glm-xml");
  std::optional<ToolUse> use;
  FieldError e = read_tools({{"tools", kTools}}, tool_format_for("chatglm4"), use);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
  EXPECT_NE(e->message.find("GLM-4-0414's"), std::string::npos) << e->message;
}

TEST(GlmTools, AConversationWithToolsIsTheTemplatesPrompt) {
  auto use = glm_tools("auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->trigger, "<tool_call>");
  const json call = json::parse(R"({"role": "assistant", "content": "", "tool_calls": [
    {"id": "a", "type": "function",
     "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\", \"days\": 2}"}},
    {"id": "b", "type": "function", "function": {"name": "now", "arguments": "{}"}}]})");
  CallNames names;
  std::vector<Turn> chat = {{"system", "Be brief."}, {"user", "Oslo?"}};
  chat.push_back(std::get<Turn>(tool_message(call, "", "messages[2]", kGlmXmlTools, &names)));
  for (const char* result : {"7 C", "noon"})
    chat.push_back(std::get<Turn>(tool_message(json{{"role", "tool"}, {"tool_call_id", "a"}},
                                               result, "messages[3]", kGlmXmlTools, &names)));
  place_tools(chat, &*use, kGlmXmlTools);
  const std::string text = rendered_prompt("glm-4.5", chat);
  const std::string* prompt = &text;
  // GLM-4.5's template renders these messages so (tools in a system turn of their own
  // first, tojson's spacing; the calls after an empty thought; one observation for both
  // results).
  EXPECT_EQ(*prompt,
            "[gMASK]<sop><|system|>\n# Tools\n\nYou may call one or more functions to assist "
            "with the user query.\n\nYou are provided with function signatures within "
            "<tools></tools> XML tags:\n<tools>\n"
            "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": "
            "\"The weather in a city\", \"parameters\": {\"type\": \"object\", \"required\": "
            "[\"city\"], \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": "
            "\"integer\"}, \"unit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"]}}}}}\n"
            "{\"type\": \"function\", \"function\": {\"name\": \"now\"}}\n</tools>\n\n"
            "For each function call, output the function name and arguments within the "
            "following XML format:\n<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n"
            "<arg_value>{arg-value-1}</arg_value>\n<arg_key>{arg-key-2}</arg_key>\n"
            "<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>"
            "<|system|>\nBe brief.<|user|>\nOslo?<|assistant|>\n<think></think>\n"
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n"
            "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n"
            "<tool_call>now\n</tool_call>"
            "<|observation|>\n<tool_response>\n7 C\n</tool_response>\n<tool_response>\nnoon\n"
            "</tool_response><|assistant|>");
}

TEST(GlmTools, AnswersAreReadBackStringsRawOthersAsJson) {
  auto use = glm_tools("auto");
  ASSERT_TRUE(use);
  const std::string answer = "Checking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
                             "<arg_value>42</arg_value>\n<arg_key>days</arg_key>\n"
                             "<arg_value>3</arg_value>\n</tool_call>\n<tool_call>now\n</tool_call>";
  ToolAnswer a = parse_tool_answer(answer, "call_", kGlmXmlTools, &use->string_args);
  EXPECT_EQ(a.content, "Checking.");
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0]["id"], "call_0");
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"42\",\"days\":3}")
      << "city is a string argument, days a number";
  EXPECT_EQ(a.tool_calls[1]["function"]["arguments"], "{}");
  // Without the schemas, text that is JSON is read as JSON.
  a = parse_tool_answer(answer, "call_", kGlmXmlTools);
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":42,\"days\":3}");
  // A key said twice (no grammar held the model) keeps its first value.
  a = parse_tool_answer("<tool_call>now\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n"
                        "<arg_key>x</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
                        "call_", kGlmXmlTools);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"x\":1}");
  // A call cut off (max_tokens) is no call; text alone is content.
  a = parse_tool_answer("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Os", "call_",
                        kGlmXmlTools, &use->string_args);
  EXPECT_TRUE(a.tool_calls.empty());
  EXPECT_EQ(a.content, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Os");
}

TEST(GlmTools, TheGrammarTakesListedArgumentsByTheirSchemas) {
  auto required = glm_tools("required");
  ASSERT_TRUE(required);
  const std::string& g = required->grammar;
  auto call = [](const std::string& args) {
    return "<tool_call>get_weather\n" + args + "</tool_call>";
  };
  auto arg = [](const std::string& k, const std::string& v) {
    return "<arg_key>" + k + "</arg_key>\n<arg_value>" + v + "</arg_value>\n";
  };
  EXPECT_TRUE(grammar_matches(g, call(arg("city", "Oslo") + arg("days", "2"))));
  EXPECT_TRUE(
      grammar_matches(g, call(arg("city", "a <b> </arg </arg_valu> x<") + arg("unit", "f"))))
      << "a string may hold '<' and starts of the closing tag";
  EXPECT_TRUE(grammar_matches(g, call(arg("city", "Rome")) + "\n<tool_call>now\n</tool_call>"))
      << "parallel calls";
  EXPECT_FALSE(grammar_matches(g, call(arg("days", "2")))) << "city is required";
  EXPECT_FALSE(grammar_matches(g, call(arg("city", "Oslo") + arg("city", "Rome"))))
      << "an argument twice";
  EXPECT_FALSE(grammar_matches(g, call(arg("days", "2") + arg("city", "Oslo"))))
      << "out of the schema's order";
  EXPECT_FALSE(grammar_matches(g, call(arg("city", "a</arg_value>b"))));
  EXPECT_FALSE(grammar_matches(g, call(arg("town", "Oslo")))) << "an unlisted argument";
  EXPECT_FALSE(grammar_matches(g, call(arg("days", "two")))) << "an integer argument";
  EXPECT_FALSE(grammar_matches(g, call(arg("unit", "k")))) << "outside the enum";
  EXPECT_FALSE(grammar_matches(g, "<tool_call>get_other\n</tool_call>"));
  // What the format writes for an earlier call is a call the grammar takes.
  const ordered_json written = {{"name", "get_weather"},
                                {"arguments", {{"city", "Oslo"}, {"days", 2}, {"unit", "c"}}}};
  EXPECT_TRUE(grammar_matches(g, kGlmXmlTools.calls_text({written})));
}

// A string behind a $ref, a bounded one, an enum without a type: written raw, read raw.
TEST(GlmTools, StringsBehindRefsEnumsAndBoundsAreRaw) {
  const ordered_json tools = ordered_json::parse(R"([{"type": "function", "function": {
    "name": "f", "parameters": {"type": "object", "properties": {
      "tz": {"$ref": "#/$defs/zone"}, "unit": {"enum": ["c", "f"]}, "n": {"type": "number"}},
      "$defs": {"zone": {"type": "string", "maxLength": 3}}}}}])");
  std::optional<ToolUse> use;
  ASSERT_FALSE(read_tools({{"tools", tools}, {"tool_choice", "required"}}, kGlmXmlTools, use));
  ASSERT_TRUE(use);
  EXPECT_EQ(use->string_args.at("f"), (std::set<std::string>{"tz", "unit"}));
  auto call = [](const std::string& tz, const std::string& unit) {
    return "<tool_call>f\n<arg_key>tz</arg_key>\n<arg_value>" + tz +
           "</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>" + unit +
           "</arg_value>\n</tool_call>";
  };
  EXPECT_TRUE(grammar_matches(use->grammar, call("CET", "c")));
  EXPECT_FALSE(grammar_matches(use->grammar, call("CEST", "c"))) << "past maxLength";
  EXPECT_FALSE(grammar_matches(use->grammar, call("CET", "\"c\""))) << "enum strings are raw";
  const ToolAnswer a = parse_tool_answer(call("123", "f"), "c", kGlmXmlTools, &use->string_args);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"tz\":\"123\",\"unit\":\"f\"}");
}

TEST(GlmTools, CallsStreamAsTheirArgumentsComeWhole) {
  auto use = glm_tools("auto");
  ASSERT_TRUE(use);
  const Streamed out = streamed_calls(kGlmXmlTools, use->string_args,
                                      {"It is ", "cold.\n<tool_", "call>get_weather\n<arg_key>ci",
                                       "ty</arg_key>\n<arg_value>Oslo</arg_value>\n<arg_key>days",
                                       "</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"});
  EXPECT_EQ(out.content, "It is cold.");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0]["function"]["arguments"], "{\"city\":\"Oslo\",\"days\":2}");
  EXPECT_EQ(out.args, "{\"city\":\"Oslo\",\"days\":2}") << "the deltas add up to the call";
}

} // namespace
} // namespace pshard::server
