// One admitted request inside the scheduler: its engine sequence, how much of the
// prompt is in the KV cache, the token sampled but not yet fed, its sampler (seeded per
// request), its text stream and its stop conditions. Only the scheduler's stepping thread
// touches it.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/generate/prompt_lookup.h"
#include "runtime/sampler/sampler.h"
#include "runtime/serve/request.h"
#include "runtime/serve/text_stream.h"
#include "runtime/tokenizer/tokenizer.h"

#include <chrono>
#include <optional>

namespace pshard {

using SteadyTime = std::chrono::steady_clock::time_point;

struct QueuedRequest {
  RequestId id = -1;
  RequestParams params;
  EventSink sink;
  SteadyTime submitted;
};

class ActiveSequence {
public:
  // `reused`: prompt positions the engine's prefix cache already holds (fed from there on).
  // `n_embd`: the engine's embedding width (embedding requests). `names`: a prompt with
  // images, its prompt_cache_keys (request.h), which its entries carry as cache keys.
  ActiveSequence(QueuedRequest request, SeqId seq, const Tokenizer& tokenizer, uint64_t order,
                 int64_t reused = 0, PromptLookup lookup = {}, int64_t n_embd = 0,
                 std::vector<TokenId> names = {});

  RequestId id() const { return request_.id; }
  SeqId seq() const { return seq_; }
  uint64_t order() const { return order_; } // admission order: larger is newer
  const EventSink& sink() const { return request_.sink; }

  bool decoding() const { return pending_.has_value(); }
  int64_t prompt_left() const;
  // Speculative decoding (a decoding sequence with PromptLookup::draft_max set): drafts
  // up to draft_limit() tokens from its history (runtime/generate/prompt_lookup.h) for
  // the next pass to check after its pending token; the count.
  int64_t propose();
  // Or the scheduler drafts for it (a draft model, batch_drafter.h): the most tokens the
  // next pass may check — draft_max, never past its max_tokens; 0 when not decoding or
  // not drafting (images) — and the draft, from its history (prompt, then generated).
  int64_t draft_limit() const;
  std::span<const TokenId> history() const { return history_; }
  void set_draft(std::vector<TokenId> draft) { draft_ = std::move(draft); }
  // The next `n` entries of this sequence for a pass: its pending token and the first
  // n - 1 drafted ones (logits on each), or a chunk of the prompt (logits on the
  // prompt's last token; an embedding request: embedding rows on those its pooling reads).
  void append_entries(int64_t n, std::vector<BatchEntry>& pass) const;
  // After a pass that carried those entries: the prompt moves on; with logits rows (one
  // per logits entry, in order) samples from them as plain decoding would, one token
  // after another while the samples equal the drafted tokens, and returns the events
  // (the last with finish set if the request ends), the drafted tokens the pass checked
  // and kept, and how many positions the engine must drop (the drafted tokens not kept).
  // `context_left`: positions the sequence may still take after this pass. An embedding
  // request pools its `hidden` rows (one per embedding entry, in order) and ends, with
  // its vector, once the prompt is read.
  struct Advanced {
    std::vector<SequenceEvent> events;
    int64_t checked = 0, accepted = 0;
    int64_t drop = 0;
  };
  Advanced advance(int64_t n, std::span<const float> rows, int64_t context_left,
                   std::span<const float> hidden = {});
  // The tokens the engine holds once `length` positions are kept: prompt, then generated.
  std::span<const TokenId> tokens(int64_t length) const {
    return std::span<const TokenId>(history_).first(static_cast<size_t>(length));
  }
  // Where the request stands (GET /slots): its prompt read so far (reused prefix
  // included), tokens generated, whether it generates yet.
  SequenceProgress progress() const;
  // The final event of a request that ends for another reason (cancel, error).
  SequenceEvent end(FinishReason reason, Status error = Status());

private:
  // Whether the request's max_predict_ms has run out (after a newline).
  bool past_predict_time() const;
  SequenceEvent sample(std::span<const float> logits, int64_t context_left);
  // Embedding requests: the rows of prompt positions [first, prompt_done_) its pooling reads.
  void pool(int64_t first, std::span<const float> hidden);
  SequenceEvent event(FinishReason finish);

  QueuedRequest request_;
  SeqId seq_;
  const Tokenizer& tokenizer_;
  uint64_t order_;
  Sampler sampler_;
  TextStream text_;
  std::vector<TokenId> history_; // prompt, then generated tokens (the penalty's window)
  std::vector<TokenId> names_;   // with images: the prompt's names in the prefix cache
  int64_t prompt_done_ = 0;
  int64_t reused_ = 0;
  int64_t n_generated_ = 0;
  bool newline_seen_ = false; // in the generated text (max_predict_ms counts from then)
  std::optional<TokenId> pending_;
  PromptLookup lookup_;
  std::vector<TokenId> draft_;   // proposed for the next pass
  std::optional<Pooler> pooler_; // embedding requests
  SteadyTime admitted_, prompt_done_at_, first_token_at_;
};

} // namespace pshard
