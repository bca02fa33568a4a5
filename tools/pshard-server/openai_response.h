// OpenAI's response shapes: whole answers (text_completion, chat.completion) with
// `usage`, `finish_reason` and `logprobs`, and the chunks a stream sends
// (text_completion / chat.completion.chunk) as server-sent events.
#pragma once

#include "tools/pshard-server/request_runner.h"
#include "tools/pshard-server/tool_calls.h"

#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace pshard::server {

// What every response of one request repeats.
struct ResponseHeader {
  std::string id; // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
  Endpoint endpoint = Endpoint::kCompletions;
};

ResponseHeader new_header(Endpoint endpoint, const std::string& model);
// What a response's tool-call ids start with: "call_<response id>_" (then 0, 1, ...),
// past choice 0 "call_<response id>_<choice>_", so that every call's id is its own.
inline std::string tool_call_id_prefix(const ResponseHeader& h, int32_t choice = 0) {
  return "call_" + h.id + "_" + (choice ? std::to_string(choice) + "_" : "");
}

// "stop" / "length" (null while running); "tool_calls" for an answer that made calls,
// unless max_tokens cut it ("length").
nlohmann::json finish_reason_json(pshard_finish_reason finish, bool made_calls = false);
// OpenAI's usage object; prompt_tokens_details.cached_tokens: the prompt's start read from
// the prefix cache.
// completion_tokens_details.reasoning_tokens with `reasoning_tokens` >= 0 (a chat whose
// thought is taken out).
nlohmann::json usage_json(int64_t n_prompt, int64_t n_cached, int64_t n_generated,
                          int64_t reasoning_tokens = -1);
// A whole answer's thought in tokens: -1 unless the request takes reasoning out.
int64_t reasoning_tokens(const GenerationRequest& r, const Completion& c);

// Token texts come from the engine (pieces may be parts of a UTF-8 character: `bytes`).
class LogprobWriter {
public:
  // `post_sampling`: the tokens carry post-sampling log-probs (post_sampling_probs), which
  // completion_probabilities gives as llama-server does, probabilities.
  LogprobWriter(const ServingEngine& engine, Endpoint endpoint, bool post_sampling = false)
      : engine_(engine), endpoint_(endpoint), post_sampling_(post_sampling) {}
  // The `logprobs` of a choice holding these tokens; text_offset counts from `offset`.
  nlohmann::json to_json(const std::vector<TokenEvent>& tokens, size_t offset = 0) const;
  // llama-server's completion_probabilities (its /completion with n_probs): per token
  // {"id", "token", "logprob", "bytes", "top_logprobs": [{"id", "token", "logprob",
  // "bytes"}]}; post-sampling, "prob" and "top_probs" instead.
  nlohmann::json completion_probabilities(std::span<const TokenEvent> tokens) const;

private:
  nlohmann::json token_bytes(const std::string& piece) const;
  nlohmann::json entry(pshard_token id, float logprob, bool with_id, bool as_prob) const;
  // Chat's logprobs content, and (with_ids) llama-server's completion_probabilities.
  nlohmann::json content_json(std::span<const TokenEvent> tokens, bool with_ids,
                              bool as_probs = false) const;
  const ServingEngine& engine_;
  Endpoint endpoint_;
  bool post_sampling_;
};

// A chat answer read back: its reasoning (reasoning.h; null when there is none or the
// request leaves it in the content), then its content and calls (tool_calls.h; the text as
// content when the request offered no tools).
struct ChatAnswer {
  nlohmann::json reasoning;
  ToolAnswer message;
};
ChatAnswer read_chat_answer(const std::string& text, const GenerationRequest& r,
                            const std::string& tool_call_id_prefix);

// One choice of a whole answer: a chat's message from `chat` (reasoning_content when
// there is reasoning; tool_calls and finish_reason "tool_calls" when there are calls,
// unless max_tokens cut the answer), or a completion's text from `c`.
nlohmann::json choice_json(int32_t index, const Completion& c, const nlohmann::json& logprobs,
                           const ChatAnswer* chat);
// The response of all choices; usage counts the prompt once and every choice's tokens.
nlohmann::json completion_body(const ResponseHeader& h, const std::vector<Completion>& choices,
                               const nlohmann::json& choices_json, int64_t reasoning_tokens = -1);
// One streamed chunk of choice `index`: text (or a chat delta) and, at its end, the
// finish reason.
nlohmann::json stream_chunk(const ResponseHeader& h, const nlohmann::json& delta_or_text,
                            const nlohmann::json& logprobs, const nlohmann::json& finish,
                            int32_t index = 0);
// The chunk with no choices that carries usage (stream_options.include_usage).
nlohmann::json usage_chunk(const ResponseHeader& h, int64_t n_prompt, int64_t n_cached,
                           int64_t n_generated, int64_t reasoning_tokens = -1);
// "data: {...}\n\n"; invalid UTF-8 in a token's text is replaced, never sent as is.
std::string sse(const nlohmann::json& j);
// A JSON body for the wire (the same replacement).
std::string dump(const nlohmann::json& j);

} // namespace pshard::server
