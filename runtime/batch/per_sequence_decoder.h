// The simplest BatchDecoder: one Decoder (a CpuSession or a HybridSession) per sequence,
// and a pass that runs each sequence's entries through its own session in turn. Correct
// by construction — each sequence is exactly a single-sequence run — and the reference
// the batched engine is tested against; not faster than running the sequences one by
// one.
//
//   PerSequenceDecoder engine(max_sequences, [&] { return CpuSession::create(model, p); });
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/model/decoder.h"

#include <functional>
#include <memory>

namespace pshard {

class PerSequenceDecoder final : public BatchDecoder {
public:
  using SessionFactory = std::function<Result<std::unique_ptr<Decoder>>()>;
  PerSequenceDecoder(int64_t max_sequences, int64_t max_batch_tokens, int64_t n_vocab,
                     SessionFactory factory)
      : max_sequences_(max_sequences), max_batch_tokens_(max_batch_tokens), n_vocab_(n_vocab),
        factory_(std::move(factory)) {}

  Result<SeqId> open_sequence() override;
  void close_sequence(SeqId seq) override;
  Status rewind_sequence(SeqId seq, std::span<const TokenId> kept) override;
  int64_t sequence_length(SeqId seq) const override;
  bool can_append(SeqId seq, int64_t n_tokens) const override;
  Result<BatchLogits> decode(std::span<const BatchEntry> batch) override;

  int64_t n_vocab() const override { return n_vocab_; }
  int64_t n_ctx() const override;
  int64_t max_batch_tokens() const override { return max_batch_tokens_; }
  int64_t max_sequences() const override { return max_sequences_; }
  KvPageStats kv_pages() const override;

private:
  const Decoder* find(SeqId seq) const;

  int64_t max_sequences_, max_batch_tokens_, n_vocab_;
  SessionFactory factory_;
  std::vector<std::unique_ptr<Decoder>> slots_; // index = SeqId; null: free
  std::vector<float> logits_;
};

} // namespace pshard
