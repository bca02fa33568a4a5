// One generation request as the scheduler takes it, and what it reports back per token.
//
//   RequestParams r;
//   r.prompt = tokenizer.encode("Once upon a time", true);
//   r.sampling.temperature = 0;            // greedy
//   r.max_tokens = 32;
//   r.stop_strings = {"\n\n"};
//   r.top_logprobs = 3;                     // each event: the chosen token's log-prob + 3 best
//   PSHARD_ASSIGN_OR_RETURN(RequestId id, scheduler.submit(std::move(r), sink));
//
// A request ends exactly once, with a final event whose `finish` is not kNone: kStop
// (an end-of-generation token, a stop token or a stop string), kLength (max_tokens, or
// the context is full), kCancelled, or kError with the reason in `error`.
#pragma once

#include "runtime/core/status.h"
#include "runtime/generate/generator.h"
#include "runtime/model/mrope_positions.h"
#include "runtime/model/pooling.h"
#include "runtime/sampler/sampler.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pshard {

using RequestId = int64_t;

// A running request's progress (Scheduler's stats; the C API's pshard_seq_progress).
struct SequenceProgress {
  RequestId id = -1;
  int64_t n_prompt = 0, n_prompt_read = 0, n_cached = 0, n_generated = 0;
  bool generating = false;
  double ms_running = 0; // since it got its sequence
};

// An image in a request's prompt (vision-language models): the projector's embedding rows
// of its tokens, fed at its span's prompt positions — placeholders there.
struct PromptImage {
  // What the image's rows are computed from — its pixels, grid and projector — as a
  // hash, so that the prefix cache may share its positions' KV pages with a later prompt
  // holding the same image at the same place (runtime/batch/cache_key.h). 0: unnamed; the
  // request's pages from this image on are not cached.
  uint64_t key = 0;
  int64_t n_embd = 0;
  std::vector<float> rows; // span.n_tokens() rows of n_embd, raster order
  // DeepStack (Qwen3-VL): n_deepstack blocks of span.n_tokens() rows (ImageEmbeddings').
  int64_t n_deepstack = 0;
  std::vector<float> deepstack;
};

// A prompt's images in prompt order: images[i] fills spans[i], and every position from the
// first image on takes M-RoPE positions from all of them (runtime/model/mrope_positions.h).
struct PromptImages {
  std::vector<ImageSpan> spans;
  std::vector<PromptImage> images;
};

struct RequestParams {
  std::vector<TokenId> prompt;
  std::shared_ptr<const PromptImages> images; // or null: a text prompt
  SamplerParams sampling;
  int32_t max_tokens = -1;               // new tokens at most; < 0: until the context is full
  bool ignore_eos = false;               // keep going past end-of-generation tokens
  std::vector<TokenId> stop_tokens;      // also end the request (not shown, like EOS)
  std::vector<std::string> stop_strings; // end it where the text contains one (cut there)
  bool logprobs = false;                 // each token's log-probability in its event
  int32_t top_logprobs = 0;              // and the N most likely alternatives (implies logprobs)
  // > 0: once the text holds a newline, the first token after generating has taken this
  // long (from the first token) ends the request with kLength: llama-server's
  // t_max_predict_ms, which code completion sets so a suggestion stops at a line's end
  // when it is slow. 0: no limit.
  int64_t max_predict_ms = 0;
  // With logprobs: those of the distribution each token was drawn from, after every
  // sampler stage (Sampler::drawn_distribution; llama-server's post_sampling_probs),
  // instead of the model's.
  bool post_sampling_probs = false;
  // Only tokens this allows are sampled (a grammar: runtime/grammar/token_grammar.h);
  // one filter per request, it keeps the request's position. An end-of-generation token
  // it allows ends the request even with ignore_eos.
  std::shared_ptr<TokenFilter> constraint;
  // An embedding request: the prompt is read, nothing is generated, and the final event
  // (kStop) carries the prompt's rows pooled as `pooling` says (mean, cls, last or none)
  // and shaped by `options` (runtime/model/pooling.h). Sampling fields are ignored.
  struct Embedding {
    Pooling pooling = Pooling::kLast;
    EmbeddingOptions options;
  };
  std::optional<Embedding> embedding;
};

enum class FinishReason { kNone, kStop, kLength, kCancelled, kError };

// OpenAI's words: "stop", "length", "cancelled", "error" ("" for kNone).
const char* finish_reason_name(FinishReason reason);

struct RequestTimings {
  double queued_ms = 0;      // submitted -> admitted into the batch
  double prompt_ms = 0;      // admitted -> the prompt's last chunk decoded
  double first_token_ms = 0; // submitted -> first token sampled
  double total_ms = 0;       // submitted -> finished
};

// One event per sampled token, and one last event when the request ends (which may also
// carry the last token). Strings and vectors are owned by the event.
struct SequenceEvent {
  RequestId id = -1;
  TokenId token = kNoToken; // kNoToken: no new token (a final event only)
  std::string text;         // new text to show: whole UTF-8 characters, stop strings cut
  float logprob = 0;        // with RequestParams::logprobs
  std::vector<TokenLogprob> top;
  FinishReason finish = FinishReason::kNone;
  Status error; // with kError
  int64_t n_prompt = 0;
  int64_t n_cached = 0;    // of those, read from the engine's prefix cache (not decoded)
  int64_t n_generated = 0; // tokens generated so far (stop tokens not counted)
  RequestTimings timings;  // complete in the final event
  std::vector<float> embedding; // an embedding request's final kStop event: the vector
  int32_t stop_string = -1;     // a final kStop event ended by a stop string: its index in
                                // RequestParams::stop_strings; -1 otherwise
};

// Called on the thread that steps the scheduler, without its locks held: it may call
// submit() or cancel(). Returning false cancels the request (a client that went away).
using EventSink = std::function<bool(const SequenceEvent&)>;

// What every request must satisfy before it queues: a prompt of known tokens that leaves
// room for max_tokens in a context of n_ctx, valid sampling parameters, images (if any)
// whose rows fill spans inside the prompt, in order, not overlapping.
// An embedding request also needs an engine that returns embedding rows (n_embd > 0) and
// a pooling and options that fit its width.
Status validate_request(const RequestParams& r, int64_t n_vocab, int64_t n_ctx, int64_t n_embd = 0);

// What names the prompt's positions in the prefix cache: its tokens, an image's rows
// image_row_key()s — up to the first unnamed image (key 0), where caching stops.
std::vector<TokenId> prompt_cache_keys(const RequestParams& r);

} // namespace pshard
