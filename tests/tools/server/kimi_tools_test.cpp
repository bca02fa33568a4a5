// Kimi K2's function calling (kimi_tools.cpp): the tools turn, earlier calls and results
// as Moonshot's template writes them (checked through the kimi-k2 chat template), answers
// read back with the model's ids, the grammar of the calls section, and streaming.
#include "tests/tools/server/chat_prompt.h"
#include "tests/tools/server/grammar_match.h"
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
    "city": {"type": "string"}, "days": {"type": "integer"}}}}},
  {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}])");

std::optional<ToolUse> kimi_tools(const char* choice) {
  std::optional<ToolUse> use;
  EXPECT_FALSE(read_tools({{"tools", kTools}, {"tool_choice", choice}}, kKimiK2Tools, use));
  return use;
}

constexpr const char* kSection = "<|tool_calls_section_begin|>";

TEST(KimiTools, TheKimiTemplateCallsInSections) {
  EXPECT_STREQ(tool_format_for("kimi-k2").name, "kimi-k2");
  auto use = kimi_tools("auto");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->trigger, kSection);
}

TEST(KimiTools, AConversationWithToolsIsTheTemplatesPrompt) {
  auto use = kimi_tools("auto");
  ASSERT_TRUE(use);
  const json call = json::parse(R"({"role": "assistant", "content": "Let me check.",
    "tool_calls": [
    {"id": "functions.get_weather:0", "type": "function",
     "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\", \"days\": 2}"}},
    {"type": "function", "function": {"name": "now", "arguments": "{}"}}]})");
  CallNames names;
  std::vector<Turn> chat = {{"system", "Be brief."}, {"user", "Oslo?"}};
  chat.push_back(
      std::get<Turn>(tool_message(call, "Let me check.", "messages[2]", kKimiK2Tools, &names)));
  chat.push_back(std::get<Turn>(
      tool_message(json{{"role", "tool"}, {"tool_call_id", "functions.get_weather:0"}}, "7 C",
                   "messages[3]", kKimiK2Tools, &names)));
  place_tools(chat, &*use, kKimiK2Tools);
  // Kimi K2's template (its tool parts; without K2-Thinking's <think></think> and default
  // system prompt, as llama.cpp's renderer) writes these messages so: the tools first
  // (tojson's spacing), the calls right after the answer's text with their arguments as the
  // client sent them, a call without an id given the model's form of one, the result under
  // its call's id.
  EXPECT_EQ(rendered_prompt("kimi-k2", chat),
            "<|im_system|>tool_declare<|im_middle|>[{\"type\": \"function\", \"function\": "
            "{\"name\": \"get_weather\", \"description\": \"The weather in a city\", "
            "\"parameters\": {\"type\": \"object\", \"required\": [\"city\"], \"properties\": "
            "{\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"}}}}}, "
            "{\"type\": \"function\", \"function\": {\"name\": \"now\", \"parameters\": "
            "{\"type\": \"object\"}}}]<|im_end|>"
            "<|im_system|>system<|im_middle|>Be brief.<|im_end|>"
            "<|im_user|>user<|im_middle|>Oslo?<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|>Let me check.<|tool_calls_section_begin|>"
            "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
            "{\"city\": \"Oslo\", \"days\": 2}<|tool_call_end|>"
            "<|tool_call_begin|>functions.now:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
            "<|tool_calls_section_end|><|im_end|>"
            "<|im_system|>tool<|im_middle|>## Return of functions.get_weather:0\n7 C<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|>");
}

TEST(KimiTools, AnswersAreReadBackWithTheModelsIds) {
  const std::string answer =
      "Checking. <|tool_calls_section_begin|><|tool_call_begin|> functions.get_weather:3 "
      "<|tool_call_argument_begin|>{\"city\": \"Oslo\", \"days\": 3}<|tool_call_end|>"
      "<|tool_call_begin|>functions.now:4<|tool_call_argument_begin|>{}<|tool_call_end|>"
      "<|tool_calls_section_end|>";
  ToolAnswer a = parse_tool_answer(answer, "call_", kKimiK2Tools);
  EXPECT_EQ(a.content, "Checking.");
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0]["id"], "functions.get_weather:3");
  EXPECT_EQ(a.tool_calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_calls[0]["function"]["arguments"], "{\"city\":\"Oslo\",\"days\":3}");
  EXPECT_EQ(a.tool_calls[1]["id"], "functions.now:4");
  EXPECT_EQ(a.tool_calls[1]["function"]["name"], "now");
  // Only calls: no content.
  a = parse_tool_answer(answer.substr(10), "call_", kKimiK2Tools);
  EXPECT_TRUE(a.content.is_null());
  // A call cut off (max_tokens) is no call; text alone is content.
  const std::string cut = "<|tool_calls_section_begin|><|tool_call_begin|>functions.now:0"
                          "<|tool_call_argument_begin|>{\"a\": ";
  a = parse_tool_answer(cut, "call_", kKimiK2Tools);
  EXPECT_TRUE(a.tool_calls.empty());
  EXPECT_EQ(a.content, cut);
  a = parse_tool_answer("No call here.", "call_", kKimiK2Tools);
  EXPECT_EQ(a.content, "No call here.");
}

TEST(KimiTools, TheGrammarTakesListedFunctionsByTheirSchemas) {
  auto required = kimi_tools("required");
  ASSERT_TRUE(required);
  const std::string& g = required->grammar;
  auto call = [](const std::string& id, const std::string& args) {
    return "<|tool_call_begin|>" + id + "<|tool_call_argument_begin|>" + args + "<|tool_call_end|>";
  };
  auto section = [](const std::string& calls) {
    return "<|tool_calls_section_begin|>" + calls + "<|tool_calls_section_end|>";
  };
  EXPECT_TRUE(grammar_matches(g, section(call("functions.get_weather:0", "{\"city\": \"Oslo\"}"))));
  EXPECT_TRUE(grammar_matches(g, section(call("functions.get_weather:12", "{\"city\": \"Oslo\"}") +
                                         call("functions.now:13", "{}"))))
      << "parallel calls";
  EXPECT_FALSE(grammar_matches(g, section(call("functions.get_weather:0", "{\"days\": 2}"))))
      << "city is required";
  EXPECT_FALSE(grammar_matches(g, section(call("functions.get_other:0", "{}"))));
  EXPECT_FALSE(grammar_matches(g, section(call("get_weather:0", "{\"city\": \"Oslo\"}"))))
      << "the id's form";
  EXPECT_FALSE(grammar_matches(g, section(call("functions.now", "{}")))) << "no index";
  EXPECT_FALSE(grammar_matches(g, call("functions.now:0", "{}"))) << "outside a section";
  // What the format writes for earlier calls is what the grammar takes.
  const ordered_json written = {{"name", "get_weather"},
                                {"arguments", {{"city", "Oslo"}, {"days", 2}}}};
  EXPECT_TRUE(grammar_matches(g, kKimiK2Tools.calls_turn("", {written})));
}

TEST(KimiTools, CallsStreamAsTheirArgumentsCome) {
  auto use = kimi_tools("auto");
  ASSERT_TRUE(use);
  ToolCallStream s(kKimiK2Tools, use->string_args);
  std::string content, args, id;
  auto take = [&](const ToolCallStream::Piece& p) {
    content += p.content;
    for (const json& d : p.deltas) {
      args += d["function"].value("arguments", "");
      if (d.contains("id"))
        id = d["id"];
    }
  };
  for (const char* piece :
       {"It is ", "cold.<|tool_calls_", "section_begin|><|tool_call_begin|>",
        "functions.get_weather:0<|tool_call_argument_begin|>{\"ci",
        "ty\": \"Oslo\", \"days\": ", "2}<|tool_call_end|>", "<|tool_calls_section_end|>"})
    take(s.push(piece, false, "c"));
  ToolCallStream::Piece last = s.push("", true, "c");
  take(last);
  EXPECT_EQ(content, "It is cold.");
  EXPECT_EQ(id, "functions.get_weather:0");
  ASSERT_EQ(last.calls.size(), 1u);
  EXPECT_EQ(last.calls[0]["function"]["arguments"], "{\"city\":\"Oslo\",\"days\":2}");
  EXPECT_EQ(args, "{\"city\":\"Oslo\",\"days\":2}") << "the deltas add up to the call";
}

} // namespace
} // namespace pshard::server
