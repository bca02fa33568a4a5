// Thinking models (Qwen3, QwQ, DeepSeek-R1 and its distills) answer
// "<think>\n...\n</think>\n\nthe answer"; Mistral's (Magistral, Ministral 3 reasoning)
// "[THINK]...[/THINK]the answer"; gpt-oss "<|channel|>analysis<|message|>...<|start|>
// assistant<|channel|>final<|message|>the answer" — each by its own tags (ThoughtTags). With the
// reasoning format "deepseek" (the default; llama.cpp's name, and the `reasoning_content` field
// llama.cpp and vLLM send) a chat answer's reasoning is taken out of its content:
// message.reasoning_content, or delta.reasoning_content while streaming; "none" leaves it all in
// content.
//
// Only an answer that opens with <think> (after whitespace) has reasoning: its text up to
// </think> (all of it when max_tokens cut the answer there), whitespace around it
// dropped; the content is what follows, leading whitespace dropped. One that opens with
// </think> has an empty thought (its opening was in the prompt). Any other answer is
// content as it is — but where the chat template's generation prompt opens the thought
// itself (chatml-thinking, deepseek3-thinking: QwQ, Qwen3 Thinking-2507, DeepSeek R1's
// later templates), every answer starts inside it (`opened`).
#pragma once

#include "tools/pshard-server/api_error.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pshard::server {

enum class ReasoningFormat { kNone, kDeepseek };

// A thought's tags, and what a prompt appends to ask for no thought (an empty one). Only
// literals (NUL-terminated: the C API is handed their data()). A vocabulary thinks with
// them when `marker` is one of its tokens — or, marker empty, when open and close are.
// `answer`, when set, is what opens an answer given without a thought (dropped from it).
// `no_thought_note`, when set, is what a user message ends with when thinking is off (GLM's
// "/nothink": its template writes it after every user message then).
struct ThoughtTags {
  std::string_view open, close, empty;
  std::string_view marker = {};
  std::string_view answer = {};
  std::string_view no_thought_note = {};
};
// Qwen3's and DeepSeek's; the empty thought is what Qwen3's template puts after the
// assistant's opening when thinking is off.
inline constexpr ThoughtTags kThinkTags{"<think>", "</think>", "<think>\n\n</think>\n\n"};
// GLM-4.5's: the same tags; with thinking off, its template closes an empty thought right
// after the assistant's opening, on a line of its own, and ends each user message "/nothink".
inline constexpr ThoughtTags kGlmThinkTags{"<think>", "</think>", "\n<think></think>",
                                           {},        {},         "/nothink"};
// Mistral's reasoning models', special tokens of their Tekken vocabularies.
inline constexpr ThoughtTags kMistralThinkTags{"[THINK]", "[/THINK]", "[THINK][/THINK]"};
// OpenAI's harmony (gpt-oss): the analysis channel is the thought and the final channel
// the answer, as the answer's text shows them (<|end|> between the two is a control token,
// never in the text). Thinking off closes an empty analysis (gpt-oss has no switch of its
// own; its template only lowers the effort).
inline constexpr ThoughtTags kHarmonyThoughtTags{
    "<|channel|>analysis<|message|>", "<|start|>assistant<|channel|>final<|message|>",
    "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>",
    "<|channel|>", "<|channel|>final<|message|>"};

// Harmony with tools: the analysis ends at the next assistant message, whatever its channel
// (the final answer, or a call on the commentary channel that the tools read back); the
// content then starts with that message's header. Thinking off closes an empty analysis
// and leaves the channel to the model.
inline constexpr ThoughtTags kHarmonyToolThoughtTags{
    "<|channel|>analysis<|message|>", "<|start|>assistant",
    "<|channel|>analysis<|message|><|end|><|start|>assistant", "<|channel|>", ""};

// "none", "deepseek", or "auto" (= deepseek); nullopt for anything else.
std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name);

// Sends reasoning and content as text comes, holding back only what may still turn out
// to be part of a tag or whitespace the whole answer would drop; everything pushed,
// concatenated, equals split_reasoning of the whole text.
class ReasoningStream {
public:
  struct Piece {
    std::string reasoning, content;
  };
  explicit ReasoningStream(bool opened = false, const ThoughtTags& tags = kThinkTags)
      : tags_(&tags), state_(opened ? State::kReasoning : State::kStart) {}
  Piece push(std::string_view text, bool last);

private:
  enum class State { kStart, kReasoning, kContentStart, kContent };
  const ThoughtTags* tags_;
  State state_;
  std::string pending_;         // held back
  bool reasoning_sent_ = false; // some reasoning went out (later whitespace is kept)
};

// A chat request's choices: `reasoning_format` ("none", "deepseek", "auto"; default the
// server's) and `chat_template_kwargs` {"enable_thinking": bool} (llama.cpp's and vLLM's
// switch for Qwen3-style templates; pshard renders templates natively, so other keys are
// refused by name rather than ignored).
// OpenAI's reasoning_effort levels (chat completions; the Responses API's reasoning.effort).
inline constexpr std::string_view kReasoningEfforts[] = {"minimal", "low", "medium", "high"};

struct ReasoningOptions {
  ReasoningFormat format = ReasoningFormat::kDeepseek;
  bool enable_thinking = true;
  // OpenAI's reasoning_effort (one of kReasoningEfforts); empty: the model's default.
  // Only harmony's template has a level to set (set_reasoning_effort).
  std::string effort;
  bool opened = false; // the prompt opens the thought: the answer starts inside it
  const ThoughtTags* tags = &kThinkTags; // the model's
};
FieldError read_reasoning_options(const nlohmann::json& body, ReasoningFormat server_default,
                                  ReasoningOptions& out);

// Harmony's system message (gpt-oss) says "Reasoning: medium"; `effort` sets it (minimal
// as low, the lowest harmony has). Other prompts are left as they are.
void set_reasoning_effort(std::string& prompt, std::string_view effort);

// A thinking model thinks before it answers, so a grammar that constrains from the first
// token (response_format, a required tool call) would forbid the thought. With thinking
// on, the grammar is moved after it: its sentences become "</think>", whitespace, then
// the answer's, triggered by the closing tag.
std::string grammar_after_thought(const std::string& gbnf, const ThoughtTags& tags = kThinkTags);

struct ReasoningSplit {
  std::optional<std::string> reasoning; // nullopt: the answer did not open with <think>
  std::string content;
};
ReasoningSplit split_reasoning(std::string_view text, bool opened = false,
                               const ThoughtTags& tags = kThinkTags);

// Counts an answer's thought in tokens (OpenAI's reasoning_tokens): the tokens whose text
// ends within it, its tags included (0 for an answer without one). Fed the answer as it
// comes: each event's text, and whether the event carried a token.
class ThoughtCounter {
public:
  explicit ThoughtCounter(bool opened = false, const ThoughtTags& tags = kThinkTags)
      : opened_(opened), tags_(&tags) {}
  void add(std::string_view text, bool token) {
    text_ += text;
    if (token)
      token_ends_.push_back(text_.size());
  }
  int64_t count() const;

private:
  bool opened_;
  const ThoughtTags* tags_;
  std::string text_;
  std::vector<size_t> token_ends_;
};

} // namespace pshard::server
