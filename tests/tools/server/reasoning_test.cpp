// A thinking model's answer split into reasoning and content (reasoning.h), whole and as
// a stream cut anywhere: a stream must send exactly what the whole answer gives.
#include "runtime/grammar/grammar.h"
#include "runtime/grammar/grammar_matcher.h"
#include "tools/pshard-server/reasoning.h"

#include <gtest/gtest.h>
#include <random>

namespace pshard::server {
namespace {

TEST(Reasoning, AnAnswerOpeningWithThinkIsSplit) {
  ReasoningSplit s = split_reasoning("<think>\nLet me see.\n2 + 2 = 4\n</think>\n\nIt is 4.");
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "Let me see.\n2 + 2 = 4");
  EXPECT_EQ(s.content, "It is 4.");

  s = split_reasoning(" \n<think></think>Hi <think>x</think>");
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "");
  EXPECT_EQ(s.content, "Hi <think>x</think>"); // only the opening thought is reasoning

  s = split_reasoning("\n</think>\n\n{\"a\": 1}"); // an empty thought, opened in the prompt
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "");
  EXPECT_EQ(s.content, "{\"a\": 1}");

  // Cut off by max_tokens while thinking: all reasoning, no content.
  s = split_reasoning("<think>\nStill going  ");
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "Still going");
  EXPECT_EQ(s.content, "");
}

// A prompt that opened the thought (chatml-thinking, ...): the answer starts inside it.
TEST(Reasoning, AThoughtThePromptOpenedStartsTheAnswer) {
  ReasoningSplit s = split_reasoning("Let me see.\n</think>\n\nIt is 4.", /*opened=*/true);
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "Let me see.");
  EXPECT_EQ(s.content, "It is 4.");
  s = split_reasoning("Hello", true); // cut off while thinking: all reasoning
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "Hello");
  EXPECT_EQ(s.content, "");
  s = split_reasoning("</think>\nHi", true);
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "");
  EXPECT_EQ(s.content, "Hi");
  EXPECT_FALSE(split_reasoning("Hello").reasoning); // not opened: content
  ThoughtCounter c(/*opened=*/true);
  for (const char* t : {"ab", " cd\n", "</think>", "\n\n", "Hi"})
    c.add(t, true);
  EXPECT_EQ(c.count(), 3);
}

// Mistral's reasoning models: the same rules by [THINK] and [/THINK].
TEST(Reasoning, MistralsTagsAreReadTheSameWay) {
  ReasoningSplit s = split_reasoning("[THINK]2 + 2 = 4[/THINK]It is 4.", false, kMistralThinkTags);
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "2 + 2 = 4");
  EXPECT_EQ(s.content, "It is 4.");
  EXPECT_FALSE(split_reasoning("<think>x</think>y", false, kMistralThinkTags).reasoning);
  ReasoningStream stream(false, kMistralThinkTags);
  EXPECT_EQ(stream.push("[THI", false).reasoning, "");
  EXPECT_EQ(stream.push("NK]ab[/TH", false).reasoning, "ab");
  EXPECT_EQ(stream.push("INK]c", false).content, "c");
  ThoughtCounter c(false, kMistralThinkTags);
  for (const char* t : {"[THINK]", "a", "[/THINK]", "b"})
    c.add(t, true);
  EXPECT_EQ(c.count(), 3);
  auto g = parse_gbnf(grammar_after_thought("root ::= \"yes\"\n", kMistralThinkTags));
  ASSERT_TRUE(g.ok()) << g.status().message();
  GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
  EXPECT_TRUE(m.accept("[/THINK]\nyes") && m.can_end());
}

// gpt-oss: the analysis channel is the reasoning, the final channel the content, as the
// answer's text shows them (its <|end|> is a control token: not in the text).
TEST(Reasoning, HarmonysChannelsAreReadAsThoughtAndAnswer) {
  const ThoughtTags& h = kHarmonyThoughtTags;
  const std::string answer = "<|channel|>analysis<|message|>User asks 2+2. Easy."
                             "<|start|>assistant<|channel|>final<|message|>It is 4.";
  ReasoningSplit s = split_reasoning(answer, false, h);
  ASSERT_TRUE(s.reasoning);
  EXPECT_EQ(*s.reasoning, "User asks 2+2. Easy.");
  EXPECT_EQ(s.content, "It is 4.");
  std::string reasoning, content;
  ReasoningStream stream(false, h);
  for (size_t at = 0; at < answer.size(); at += 5) { // cut through every marker somewhere
    const ReasoningStream::Piece p = stream.push(std::string_view(answer).substr(at, 5), false);
    reasoning += p.reasoning;
    content += p.content;
  }
  content += stream.push("", true).content;
  EXPECT_EQ(reasoning, *s.reasoning);
  EXPECT_EQ(content, s.content);
  auto g = parse_gbnf(grammar_after_thought("root ::= \"yes\"\n", h));
  ASSERT_TRUE(g.ok()) << g.status().message();
  GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
  EXPECT_TRUE(m.accept("<|start|>assistant<|channel|>final<|message|>yes") && m.can_end());
  // An answer straight on the final channel is content without its channel's header.
  s = split_reasoning("<|channel|>final<|message|>It is 4.", false, h);
  EXPECT_FALSE(s.reasoning);
  EXPECT_EQ(s.content, "It is 4.");
  ReasoningStream direct(false, h);
  EXPECT_EQ(direct.push("<|channel|>fi", false).content, "");
  EXPECT_EQ(direct.push("nal<|message|>It", false).content, "It");
  // reasoning_effort sets harmony's level; minimal is its lowest, low.
  std::string prompt = "<|start|>system<|message|>x\nReasoning: medium\n\n# Valid<|end|>";
  set_reasoning_effort(prompt, "high");
  EXPECT_EQ(prompt, "<|start|>system<|message|>x\nReasoning: high\n\n# Valid<|end|>");
  set_reasoning_effort(prompt, "minimal"); // only the default is replaced: high stays
  EXPECT_EQ(prompt, "<|start|>system<|message|>x\nReasoning: high\n\n# Valid<|end|>");
  std::string medium = "a\nReasoning: medium\nb";
  set_reasoning_effort(medium, "minimal");
  EXPECT_EQ(medium, "a\nReasoning: low\nb");
  // Thinking off: the prompt closes an empty analysis and opens the final channel.
  EXPECT_TRUE(h.empty.starts_with(h.open) && h.empty.ends_with(h.close));
}

TEST(Reasoning, AnyOtherAnswerIsContentAsItIs) {
  for (const char* text : {"Hello", "  Hello <think>no</think>", "", "\n", "<thin", "<think",
                           "<thinking>x</thinking>"}) {
    const ReasoningSplit s = split_reasoning(text);
    EXPECT_FALSE(s.reasoning) << text;
    EXPECT_EQ(s.content, text);
  }
}

TEST(Reasoning, AStreamSendsWhatTheWholeAnswerGivesWhereverItIsCut) {
  const std::vector<std::string> answers = {
      "<think>\nLet me see.\n2 + 2 = 4\n</think>\n\nIt is 4.",
      "\n<think>a </ b </thin c\n\n</think>",
      "<think>  x  </think>  <think>y</think> z ",
      "<think>never closed \n ",
      "<thinker>",
      " plain < text",
      "<think></think>\n",
      " </think> x",
      "</thin",
      "</b>",
  };
  std::mt19937 rng(7);
  for (const bool opened : {false, true})
    for (const std::string& text : answers) {
      const ReasoningSplit whole = split_reasoning(text, opened);
      for (int trial = 0; trial < 200; ++trial) {
        ReasoningStream stream(opened);
        std::string reasoning, content;
        size_t at = 0;
        while (at < text.size()) {
          // Cuts of 0 to 3 bytes: every tag and space boundary is hit somewhere.
          const size_t n = std::min(text.size() - at, size_t(rng() % 4));
          ReasoningStream::Piece p = stream.push(std::string_view(text).substr(at, n), false);
          reasoning += p.reasoning;
          content += p.content;
          at += n;
        }
        ReasoningStream::Piece p = stream.push("", true);
        reasoning += p.reasoning;
        content += p.content;
        EXPECT_EQ(reasoning, whole.reasoning.value_or("")) << text << opened;
        EXPECT_EQ(content, whole.content) << text << opened;
      }
    }
}

TEST(Reasoning, ContentIsNotHeldBackOnceKnown) {
  ReasoningStream stream;
  EXPECT_EQ(stream.push("<th", false).content, ""); // may still be <think>
  EXPECT_EQ(stream.push("e", false).content, "<the");
  EXPECT_EQ(stream.push("n", false).content, "n");
  ReasoningStream thinking;
  EXPECT_EQ(thinking.push("<think>one two", false).reasoning, "one two");
  EXPECT_EQ(thinking.push(" three </", false).reasoning, " three"); // the space waits
  const ReasoningStream::Piece p = thinking.push("think>\n\nDone", false);
  EXPECT_EQ(p.reasoning, "");
  EXPECT_EQ(p.content, "Done");
}

TEST(Reasoning, AGrammarMovedAfterTheThoughtLetsTheModelThinkFirst) {
  auto g = parse_gbnf(grammar_after_thought("root ::= answer\nanswer ::= \"yes\" | \"no\"\n"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto grammar = std::make_shared<const Grammar>(std::move(*g));
  auto matches = [&](std::string_view text) {
    GrammarMatcher m(grammar);
    return m.accept(text) && m.can_end();
  };
  EXPECT_TRUE(matches("</think>\n\nyes"));
  EXPECT_TRUE(matches("</think>no"));
  EXPECT_FALSE(matches("yes")); // the trigger, "</think>", begins every sentence
  EXPECT_FALSE(matches("</think>\nmaybe"));
}

TEST(Reasoning, TheThoughtIsCountedInTokensThatEndWithinIt) {
  auto count = [](const std::vector<std::string>& tokens, const std::string& tail = "") {
    ThoughtCounter c;
    for (const std::string& t : tokens)
      c.add(t, true);
    c.add(tail, false);
    return c.count();
  };
  EXPECT_EQ(count({"<think>", "\nab", " cd\n", "</think>", "\n\n", "Hi"}), 4);
  EXPECT_EQ(count({"<think>", "\nab", " cd\n</think>\n\nHi"}), 2) << "a token past its end";
  EXPECT_EQ(count({"<think>", "cut off"}), 2) << "unclosed: all of it";
  EXPECT_EQ(count({"</think>", "x"}), 1) << "an empty thought opened in the prompt";
  EXPECT_EQ(count({"Hi", "<think>", "x</think>"}), 0) << "no thought first: none";
  EXPECT_EQ(count({"<thi", "nk>x</think>", "y"}, "z"), 2);
}

TEST(Reasoning, RequestOptionsAreReadAndBadOnesNamed) {
  ReasoningOptions o;
  ASSERT_FALSE(read_reasoning_options(nlohmann::json::object(), ReasoningFormat::kNone, o));
  EXPECT_EQ(o.format, ReasoningFormat::kNone);
  EXPECT_TRUE(o.enable_thinking);
  ASSERT_FALSE(read_reasoning_options(
      {{"reasoning_format", "auto"}, {"chat_template_kwargs", {{"enable_thinking", false}}}},
      ReasoningFormat::kNone, o));
  EXPECT_EQ(o.format, ReasoningFormat::kDeepseek);
  EXPECT_FALSE(o.enable_thinking);
  FieldError e = read_reasoning_options({{"reasoning_format", "r1"}}, ReasoningFormat::kNone, o);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "reasoning_format");
  e = read_reasoning_options({{"chat_template_kwargs", {{"add_vision_id", true}}}},
                             ReasoningFormat::kNone, o);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "chat_template_kwargs.add_vision_id");
  EXPECT_EQ(e->code, "unsupported_parameter");
  e = read_reasoning_options({{"chat_template_kwargs", {{"enable_thinking", "no"}}}},
                             ReasoningFormat::kNone, o);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "chat_template_kwargs.enable_thinking");
  ASSERT_FALSE(read_reasoning_options({{"reasoning_effort", "high"}}, ReasoningFormat::kNone, o));
  EXPECT_EQ(o.effort, "high");
  e = read_reasoning_options({{"reasoning_effort", "extreme"}}, ReasoningFormat::kNone, o);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "reasoning_effort");
  EXPECT_NE(e->message.find("\"extreme\""), std::string::npos) << e->message;
}

} // namespace
} // namespace pshard::server
