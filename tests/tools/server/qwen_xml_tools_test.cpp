// Qwen3-Coder's and Qwen3.5's function calling (qwen_xml_tools.cpp, xml_args.cpp): the tools
// block where each template puts it, earlier calls and results as the published templates
// write them (checked through the qwen3-coder and qwen3.5 chat templates against the prompt
// the Jinja renders, worked out by hand), answers read back (strings raw, the rest JSON or
// Python's spelling; one newline each side of a value dropped; a cut-off call), the grammar
// of a call and streaming.
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
  "name": "get_weather", "description": " The weather in a city\n",
  "parameters": {"type": "object", "required": ["city"], "properties": {
    "city": {"type": "string"},
    "days": {"type": "integer", "description": "How many", "minimum": 1},
    "hourly": {"type": "boolean"},
    "unit": {"type": "string", "enum": ["c", "f"]}}}}},
  {"type": "function", "function": {"name": "now"}}])");

const std::string kInstruction =
    "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
    "</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second "
    "parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n"
    "<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner "
    "<function=...></function> block must be nested within <tool_call></tool_call> XML tags\n"
    "- Required parameters MUST be specified\n- You may provide optional reasoning for your "
    "function call in natural language BEFORE the function call, but NOT after\n- If there is "
    "no function call available, answer the question like normal with your current knowledge "
    "and do not tell the user about function calls\n</IMPORTANT>";

std::optional<ToolUse> tools_of(const ToolFormat& format, const char* choice) {
  std::optional<ToolUse> use;
  EXPECT_FALSE(read_tools({{"tools", kTools}, {"tool_choice", choice}}, format, use));
  return use;
}

// A conversation with calls and results through `format` and the template `name`.
std::string prompt(const ToolFormat& format, const char* name, std::vector<Turn> chat,
                   const json& call, const std::vector<const char*>& results) {
  auto use = tools_of(format, "auto");
  EXPECT_TRUE(use);
  CallNames names;
  chat.push_back(
      std::get<Turn>(tool_message(call, call.value("content", ""), "messages[2]", format, &names)));
  for (const char* result : results)
    chat.push_back(std::get<Turn>(tool_message(json{{"role", "tool"}, {"tool_call_id", "a"}},
                                               result, "messages[3]", format, &names)));
  place_tools(chat, &*use, format);
  return rendered_prompt(name, chat);
}

TEST(QwenXmlTools, TheTemplatesPickTheirFormats) {
  EXPECT_STREQ(tool_format_for("qwen3-coder").name, "qwen3-coder");
  EXPECT_STREQ(tool_format_for("qwen3.5").name, "qwen3.5");
  EXPECT_STREQ(tool_format_for("chatml").name, "hermes") << "Qwen3, Qwen3-Next: Hermes JSON";
  auto use = tools_of(kQwen35Tools, "auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->trigger, "<tool_call>");
}

TEST(QwenXmlTools, Qwen35ConversationIsTheTemplatesPrompt) {
  const json call = json::parse(R"({"role": "assistant", "content": "Checking.", "tool_calls": [
    {"id": "a", "type": "function", "function": {"name": "get_weather",
     "arguments": "{\"city\": \"Oslo\", \"days\": 2, \"hourly\": true, \"at\": [1, \"x\"]}"}},
    {"id": "b", "type": "function", "function": {"name": "now", "arguments": "{}"}}]})");
  const std::string text =
      prompt(kQwen35Tools, "qwen3.5", {{"system", "Be brief. "}, {"user", "Oslo?"}}, call,
             {"7 C", "noon"});
  // The tools first in the system turn, one tojson line each, the client's system text
  // after them (trimmed); content, a blank line, the calls (True as Python's str() writes
  // it, a list as JSON); the results joined in one user turn; the thought opened.
  EXPECT_EQ(text,
            "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n"
            "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
            "\"description\": \" The weather in a city\\n\", \"parameters\": {\"type\": "
            "\"object\", \"required\": [\"city\"], \"properties\": {\"city\": {\"type\": "
            "\"string\"}, \"days\": {\"type\": \"integer\", \"description\": \"How many\", "
            "\"minimum\": 1}, \"hourly\": {\"type\": \"boolean\"}, \"unit\": {\"type\": "
            "\"string\", \"enum\": [\"c\", \"f\"]}}}}}\n{\"type\": \"function\", \"function\": "
            "{\"name\": \"now\"}}\n</tools>" +
                kInstruction +
                "\n\nBe brief.<|im_end|>\n<|im_start|>user\nOslo?<|im_end|>\n"
                "<|im_start|>assistant\nChecking.\n\n<tool_call>\n<function=get_weather>\n"
                "<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n"
                "<parameter=hourly>\nTrue\n</parameter>\n<parameter=at>\n[1, \"x\"]\n"
                "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=now>\n"
                "</function>\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n7 C\n"
                "</tool_response>\n<tool_response>\nnoon\n</tool_response><|im_end|>\n"
                "<|im_start|>assistant\n<think>\n");
}

TEST(QwenXmlTools, Qwen3CoderConversationIsTheTemplatesPrompt) {
  const json call = json::parse(R"({"role": "assistant", "content": "", "tool_calls": [
    {"id": "a", "type": "function", "function": {"name": "get_weather",
     "arguments": "{\"city\": \"Oslo\", \"opts\": {\"a\": [1, true, null, \"it's\"]}}"}}]})");
  const std::string text =
      prompt(kQwen3CoderTools, "qwen3-coder", {{"user", "Oslo?"}}, call, {"7 C"});
  // No system message: the template's default one, then the tools in XML (a parameter's
  // other keys as elements, enum left out, the required list); a call without content
  // right after the turn's opening, an object as Python's str() writes it; each result
  // ending in a newline.
  EXPECT_EQ(text,
            "<|im_start|>system\nYou are Qwen, a helpful AI assistant that can interact with a "
            "computer to solve tasks.\n\nYou have access to the following functions:\n\n<tools>\n"
            "<function>\n<name>get_weather</name>\n<description>The weather in a city"
            "</description>\n<parameters>\n<parameter>\n<name>city</name>\n<type>string</type>\n"
            "</parameter>\n<parameter>\n<name>days</name>\n<type>integer</type>\n<description>"
            "How many</description>\n<minimum>1</minimum>\n</parameter>\n<parameter>\n<name>"
            "hourly</name>\n<type>boolean</type>\n</parameter>\n<parameter>\n<name>unit</name>\n"
            "<type>string</type>\n</parameter>\n<required>[`city`]</required>\n</parameters>\n"
            "</function>\n<function>\n<name>now</name>\n<description></description>\n"
            "<parameters>\n</parameters>\n</function>\n</tools>" +
                kInstruction +
                "<|im_end|>\n<|im_start|>user\nOslo?<|im_end|>\n<|im_start|>assistant\n"
                "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
                "<parameter=opts>\n{'a': [1, True, None, \"it's\"]}\n</parameter>\n</function>\n"
                "</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n7 C\n"
                "</tool_response>\n<|im_end|>\n<|im_start|>assistant\n");
  // With a system message, the tools follow it; with content, a blank line before the calls.
  const json said = json::parse(R"({"role": "assistant", "content": "Sure.", "tool_calls": [
    {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}]})");
  const std::string text2 = prompt(kQwen3CoderTools, "qwen3-coder",
                                   {{"system", "Be brief."}, {"user", "Now?"}}, said, {});
  EXPECT_EQ(text2.rfind("<|im_start|>system\nBe brief.\n\nYou have access to", 0), 0u) << text2;
  EXPECT_NE(text2.find("<|im_start|>assistant\nSure.\n\n<tool_call>\n<function=now>\n"
                       "</function>\n</tool_call><|im_end|>\n"),
            std::string::npos)
      << text2;
}

TEST(QwenXmlTools, AnswersAreReadBackStringsRawOthersAsTheirValues) {
  auto use = tools_of(kQwen35Tools, "auto");
  ASSERT_TRUE(use);
  const std::string answer =
      "Let me look.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n"
      "<parameter=days>\n3\n</parameter>\n<parameter=hourly>\nTrue\n</parameter>\n</function>\n"
      "</tool_call>\n<tool_call>\n<function=now>\n</function>\n</tool_call>";
  ToolAnswer a = parse_tool_answer(answer, "call_", kQwen35Tools, &use->string_args);
  EXPECT_EQ(a.content, "Let me look.");
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"],
            "{\"city\":\"42\",\"days\":3,\"hourly\":true}")
      << "city is a string argument; Python's True is true";
  EXPECT_EQ(a.tool_calls[1]["function"]["name"], "now");
  EXPECT_EQ(a.tool_calls[1]["function"]["arguments"], "{}");
  // A string keeps its inner lines and indentation; one newline each side is the markup's.
  a = parse_tool_answer("<tool_call>\n<function=get_weather>\n<parameter=city>\n  two\n\nlines\n\n"
                        "</parameter>\n</function>\n</tool_call>",
                        "c", kQwen35Tools, &use->string_args);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(json::parse(a.tool_calls[0]["function"]["arguments"].get<std::string>())["city"],
            "  two\n\nlines\n");
  EXPECT_TRUE(a.content.is_null());
  // An answer ending after </function> (its </tool_call> never written) still calls.
  a = parse_tool_answer("<tool_call>\n<function=now>\n</function>\n", "c", kQwen3CoderTools);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  // Cut off inside a value: no call; the text is content.
  const std::string cut = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOs";
  a = parse_tool_answer(cut, "c", kQwen35Tools, &use->string_args);
  EXPECT_TRUE(a.tool_calls.empty());
  EXPECT_EQ(a.content, cut);
}

TEST(QwenXmlTools, TheGrammarTakesListedParametersByTheirSchemas) {
  for (const ToolFormat* format : {&kQwen35Tools, &kQwen3CoderTools}) {
    SCOPED_TRACE(format->name);
    auto required = tools_of(*format, "required");
    ASSERT_TRUE(required);
    const std::string& g = required->grammar;
    auto call = [](const std::string& name, const std::string& args) {
      return "<tool_call>\n<function=" + name + ">\n" + args + "</function>\n</tool_call>";
    };
    auto arg = [](const std::string& k, const std::string& v) {
      return "<parameter=" + k + ">\n" + v + "\n</parameter>\n";
    };
    EXPECT_TRUE(grammar_matches(g, call("get_weather", arg("city", "Oslo") + arg("days", "2"))));
    EXPECT_TRUE(grammar_matches(g, call("get_weather", arg("city", "a <b>\n</param </parameter x") +
                                                           arg("hourly", "true"))))
        << "a string may hold lines, '<' and starts of the closing tag";
    EXPECT_TRUE(
        grammar_matches(g, call("get_weather", arg("city", "Rome")) + "\n" + call("now", "")))
        << "parallel calls";
    EXPECT_FALSE(grammar_matches(g, call("get_weather", arg("days", "2")))) << "city is required";
    EXPECT_FALSE(grammar_matches(g, call("get_weather", arg("city", "a</parameter>b"))));
    EXPECT_FALSE(grammar_matches(g, call("get_weather", arg("city", "O") + arg("city", "R"))));
    EXPECT_FALSE(grammar_matches(g, call("get_weather", arg("days", "2") + arg("city", "O"))))
        << "out of the schema's order";
    EXPECT_FALSE(grammar_matches(g, call("get_weather", arg("city", "O") + arg("days", "two"))));
    EXPECT_FALSE(grammar_matches(g, call("get_weather", arg("city", "O") + arg("unit", "k"))));
    EXPECT_FALSE(grammar_matches(g, call("get_other", "")));
    // What the format writes for an earlier call is a call the grammar takes.
    const ordered_json written = {{"name", "get_weather"},
                                  {"arguments", {{"city", "Oslo"}, {"days", 2}, {"unit", "c"}}}};
    EXPECT_TRUE(grammar_matches(g, format->calls_text({written}))) << format->calls_text({written});
  }
}

TEST(QwenXmlTools, CallsStreamAsTheirArgumentsComeWhole) {
  auto use = tools_of(kQwen35Tools, "auto");
  ASSERT_TRUE(use);
  const Streamed out = streamed_calls(
      kQwen35Tools, use->string_args,
      {"It is ", "cold.\n\n<tool_", "call>\n<function=get_we", "ather>\n<para", "meter=city>\nOs",
       "lo\n</parameter>\n<parameter=days>\n2\n</param", "eter>\n</function>\n</tool_call>"});
  EXPECT_EQ(out.content, "It is cold.");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0]["function"]["arguments"], "{\"city\":\"Oslo\",\"days\":2}");
  EXPECT_EQ(out.args, "{\"city\":\"Oslo\",\"days\":2}") << "the deltas add up to the call";
}

} // namespace
} // namespace pshard::server
