// llama-server's native answer, as its POST /completion and /infill give it (what
// SillyTavern, llama.vscode and other clients of llama.cpp's own API read), for requests
// that ran as OpenAI completions (native_completion.h, infill.h).
#pragma once

#include "pshard/pshard.h"
#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/openai_response.h"
#include "tools/pshard-server/request_runner.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pshard::server {

// What an answer counts: tokens, and the times from the request's admission.
struct NativeCounts {
  int64_t n_prompt = 0, n_cached = 0, n_generated = 0;
  double first_token_ms = 0, total_ms = 0;
};
template <typename Event> NativeCounts native_counts(const Event& e) { // TokenEvent, Completion
  return {e.n_prompt, e.n_cached, e.n_generated, e.first_token_ms, e.total_ms};
}

// llama-server's answer: {"content", "stop": true, "stop_type" ("eos", "limit", "word"),
// "stopping_word" (the stop string that ended it, or ""), "tokens_predicted",
// "tokens_evaluated", "tokens_cached", "model", "timings"}; streamed, chunks of
// {"content", "stop": false} and that last object with empty content. `stopping_word`:
// the stop string, or null. timings: llama-server's prompt_n (the prompt tokens not read
// from the prefix cache), prompt_ms (admission to first token, so a wait in the queue
// counts), predicted_n, predicted_ms and their per-token and per-second figures.
// With `probabilities` (n_probs: LogprobWriter::completion_probabilities) not null, it is
// the answer's "completion_probabilities". "tokens": `tokens` (the generated ids, with
// return_tokens; else empty, as llama-server sends it).
nlohmann::json native_answer(const std::string& content, pshard_finish_reason finish,
                             const NativeCounts& counts, const std::string& model,
                             const nlohmann::json& stopping_word,
                             const nlohmann::json& probabilities = nullptr,
                             const std::vector<pshard_token>& tokens = {});

// That answer streamed: {"content", "tokens", "stop": false} chunks, the last object at
// the end; with `probabilities` (a request with n_probs) each token's chunk carries its
// completion_probabilities entry, with `return_tokens` its id in "tokens" (and every
// token has its chunk, its text whole or not yet).
class NativeStream {
public:
  NativeStream(std::string model, std::vector<std::string> stops,
               std::optional<LogprobWriter> probabilities = std::nullopt,
               bool return_tokens = false)
      : model_(std::move(model)), stops_(std::move(stops)),
        probabilities_(std::move(probabilities)), return_tokens_(return_tokens) {}
  std::string opening() const { return ""; }
  std::string on_event(const TokenEvent& e) const;
  std::string error(const ApiError& e) const;

private:
  std::string model_;
  std::vector<std::string> stops_;
  std::optional<LogprobWriter> probabilities_;
  bool return_tokens_;
};

} // namespace pshard::server
