// The batched engine on the host CPU: many sequences over one paged KV cache
// (kv_page_pool.h), each decode() one forward pass over all the new tokens of all the
// sequences in it. Weights are read once per pass however many sequences share it, which
// is where batching's throughput comes from; every sub-layer but attention treats the
// tokens as independent rows, attention runs per sequence over its own pages.
//
//   BatchParams bp;
//   bp.max_sequences = 16;
//   PSHARD_ASSIGN_OR_RETURN(auto engine, BatchedCpuSession::create(model, bp));
//   PSHARD_ASSIGN_OR_RETURN(SeqId s, engine->open_sequence());
//   PSHARD_ASSIGN_OR_RETURN(BatchLogits out, engine->decode(entries));
//
// Batch invariance: the kernels compute each row with a fixed instruction sequence
// whatever else shares the call, and paged attention visits positions in order, so a
// sequence's logits are bit-identical to the same tokens decoded alone by a CpuSession.
//
// A model with recurrent layers (Qwen3-Next, Qwen3.5): those layers' pool holds one state
// per sequence slot (a SeqId's), not pages; its sequences share no prefixes and rewind
// only to 0 or where they are.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/batch/kv_page_pool.h"
#include "runtime/batch/sequence_pages.h"
#include "runtime/model/kv_ring.h"
#include "runtime/model/kv_types.h"
#include "runtime/model/model.h"

#include <memory>
#include <vector>

namespace pshard {

struct BatchParams {
  int64_t max_sequences = 8;
  int64_t n_ctx = 0;             // most positions per sequence; 0: the model's, capped at 4096
  int64_t max_batch_tokens = 512; // most entries per decode()
  int64_t max_logit_rows = 0;    // most logits entries per decode(); 0: max_sequences
  int64_t page_tokens = kKvPageTokens; // runtime/model/kv_ring.h
  int64_t n_pages = 0;           // 0: enough for every sequence at n_ctx
  int32_t n_threads = 0;         // 0: all hardware threads
  TensorType kv_type_k = kDefaultKvType; // runtime/model/kv_types.h
  TensorType kv_type_v = kDefaultKvType;
  bool prefix_cache = true; // share the KV pages of prompts' common starts (prefix_cache.h)
  // Sliding-window layers keep every position, as the others do, instead of their last
  // window's pages (window_pages.h): llama.cpp's --swa-full.
  bool swa_full = false;
};

// kInvalidArgument naming the counts when one is not positive (0 where a default exists).
Status check_batch_params(const BatchParams& params);

// The sequences' limits of an engine for `params` (n_ctx resolved): n_pages defaults to
// every sequence at n_ctx; a model with sliding-window layers gets their pool of window
// pages (unless swa_full, or where it would hold no fewer pages).
SequenceLimits sequence_limits(const ModelHParams& hp, const BatchParams& params, int64_t n_ctx);
// Per layer, its pages in the pool: the window pool's for the sliding-window layers; a
// recurrent layer's (`state_rows` > 0: model_state_rows) one state per sequence slot.
std::vector<int64_t> pool_layer_pages(const ModelHParams& hp, const SequenceLimits& limits,
                                      std::span<const int64_t> state_rows = {});

class BatchedCpuSession final : public BatchDecoder {
public:
  static Result<std::unique_ptr<BatchedCpuSession>> create(const Model& model,
                                                           const BatchParams& params);

  Result<SeqId> open_sequence() override { return seqs_.open(); }
  Result<OpenedSequence> open_sequence_with_prefix(std::span<const TokenId> prompt) override {
    return seqs_.open_with_prefix(prompt);
  }
  void close_sequence(SeqId seq) override { seqs_.close(seq); }
  Status rewind_sequence(SeqId seq, std::span<const TokenId> kept) override {
    return seqs_.rewind(seq, kept);
  }
  int64_t sequence_length(SeqId seq) const override { return seqs_.length(seq); }
  bool can_append(SeqId seq, int64_t n) const override { return seqs_.can_append(seq, n); }
  Result<BatchLogits> decode(std::span<const BatchEntry> batch) override;

  int64_t n_vocab() const override { return model_.hparams().n_vocab; }
  bool embeds_only() const override { return !model_.hparams().causal; }
  int64_t n_embd() const override { return model_.hparams().n_embd; }
  int64_t n_ctx() const override { return params_.n_ctx; }
  int64_t max_batch_tokens() const override { return params_.max_batch_tokens; }
  int64_t max_sequences() const override { return params_.max_sequences; }
  KvPageStats kv_pages() const override { return seqs_.stats(); }

private:
  BatchedCpuSession(const Model& model, const BatchParams& params, const SequenceLimits& limits,
                    std::unique_ptr<KvPagePool> pool);

  const Model& model_;
  BatchParams params_;
  std::unique_ptr<KvPagePool> pool_;
  SequencePages seqs_;
  Activations act_;
  std::unique_ptr<ThreadPool> threads_;
  std::unique_ptr<CpuOps> cpu_;
  std::vector<float> embeddings_; // the last pass's embedding rows (BatchEntry::hidden)
};

} // namespace pshard
