// A draft model for every sequence of a batch at once (llama-server's -md, batched): one
// batched engine of the draft model (a BatchDecoder, paged KV, prefix cache) holds a
// sequence per request, kept in step with the request's text; each scheduler pass, every
// decoding request's draft comes from the same few passes of that engine — its new
// tokens read in one pass, then one drafted token of every sequence per pass — so a
// batch of four pays about one draft-model step per drafted position, not four. A new
// request's prompt shares the pages of an earlier one's start (a system prompt, a
// conversation's earlier turns) through the engine's prefix cache.
//
//   BatchDrafter drafter(std::move(draft_engine), target_vocab, kDefaultDraftPMin);
//   DraftWant wants[] = {{id_a, history_a, 16}, {id_b, history_b, 16}};
//   PSHARD_ASSIGN_OR_RETURN(auto drafts, drafter.draft(wants));   // drafts[i] for wants[i]
//   drafter.forget(id_a);                                           // request a ended
//
// Not thread-safe: the scheduler's stepping thread drives it.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/serve/request.h"

#include <map>
#include <memory>
#include <span>
#include <vector>

namespace pshard {

struct DraftWant {
  RequestId key = -1;               // whose sequence: the same key each pass
  std::span<const TokenId> history; // every token so far, the last one sampled
  int64_t limit = 0;                // most tokens to draft
};

class BatchDrafter {
public:
  // `engine`: the draft model's (its vocabulary checked against the target's by the
  // caller); drafted tokens stop at one the target's vocabulary (`target_vocab` tokens)
  // lacks, or one the draft model gives less than `p_min` probability.
  BatchDrafter(std::unique_ptr<BatchDecoder> engine, int64_t target_vocab, float p_min)
      : engine_(std::move(engine)), target_vocab_(target_vocab), p_min_(p_min) {}
  ~BatchDrafter();
  BatchDrafter(const BatchDrafter&) = delete;
  BatchDrafter& operator=(const BatchDrafter&) = delete;

  // A draft for each want, in order (empty where nothing is drafted: no room left in
  // the draft engine's context or pages, or an unsure first token). A failed pass fails
  // the call; the sequences it touched are forgotten, so the next call starts them anew.
  Result<std::vector<std::vector<TokenId>>> draft(std::span<const DraftWant> wants);
  // The request ended: its sequence's pages go back (to the prefix cache where cached).
  void forget(RequestId key);

  int64_t passes() const { return passes_; } // the draft engine's passes so far
  const BatchDecoder& engine() const { return *engine_; }

private:
  struct Sequence {
    SeqId seq = -1;
    std::vector<TokenId> held; // what its positions hold
  };
  // The want's sequence, opened or rewound to the longest start it shares with the
  // history (at most all but its last token); null when it has no room to draft.
  Result<Sequence*> sync(const DraftWant& want);
  Result<BatchLogits> pass(std::span<const BatchEntry> entries);

  std::unique_ptr<BatchDecoder> engine_;
  int64_t target_vocab_;
  float p_min_;
  std::map<RequestId, Sequence> seqs_;
  int64_t passes_ = 0;
};

} // namespace pshard
