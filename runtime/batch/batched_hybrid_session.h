// The batched engine over a schedule: many sequences share ONE HybridSession — one set of
// resident weights, one device, one paged KV cache — and each decode() is one forward
// pass over every sequence's new tokens. The pass's tier is its total new tokens (16
// sequences decoding together run the tier-16 plan); plan lookup, streaming, budgets and
// budget switches are HybridSession's (hybrid_session.h). Attention runs per sequence
// over its pages: CPU-run attention over the host page pool, device attention over the
// plan's resident KV buffer used as a device page pool with the same page numbers (the
// page tables mapped for the device), streamed attention over the host pool mapped.
//
//   PSHARD_ASSIGN_OR_RETURN(auto device, make_device(device_options, &schedule));
//   BatchParams bp;
//   bp.max_sequences = 16;
//   PSHARD_ASSIGN_OR_RETURN(auto engine, BatchedHybridSession::create(
//       model, &schedule, std::move(device), bp, {.vram_budget = 512ull << 20}));
//   PSHARD_ASSIGN_OR_RETURN(BatchLogits out, engine->decode(entries));
//
// A plan that keeps attention resident holds device KV pages for the sequences the
// schedule was compiled for (pshard-compile --parallel); an engine for more sequences is
// refused naming that fix. Batch invariance: on cpu and emu every sequence's logits are
// bit-identical to the same sequence run alone, whatever the plan.
#pragma once

#include "runtime/batch/batched_cpu_session.h"
#include "runtime/batch/sequence_pages.h"
#include "runtime/executor/hybrid_session.h"

#include <memory>
#include <optional>

namespace pshard {

struct BatchedHybridOptions {
  uint64_t vram_budget = 0; // with a schedule and a device; 0: the largest compiled budget
  int64_t force_tier = 0;   // benchmarks: every pass runs this compiled tier's plan
  // KV cache element types, read instead of BatchParams': unset, the schedule's
  // (--kv-type), or kDefaultKvType without one. With a schedule they must be its type.
  std::optional<TensorType> kv_type_k, kv_type_v;
};

class BatchedHybridSession final : public BatchDecoder {
public:
  // `schedule` may be null (every sub-layer on the CPU), `device` too (the cpu backend:
  // the plans are looked up, everything runs on the host). `model` and `schedule` must
  // outlive the engine.
  static Result<std::unique_ptr<BatchedHybridSession>>
  create(const Model& model, const Schedule* schedule, std::unique_ptr<Device> device,
         const BatchParams& params, const BatchedHybridOptions& options);
  ~BatchedHybridSession() override;

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

  int64_t n_vocab() const override { return n_vocab_; }
  bool embeds_only() const override { return !causal_; }
  int64_t n_embd() const override { return n_embd_; }
  int64_t n_ctx() const override { return seqs_.limits().n_ctx; }
  int64_t max_batch_tokens() const override { return max_batch_tokens_; }
  int64_t max_sequences() const override { return seqs_.limits().max_sequences; }
  KvPageStats kv_pages() const override { return seqs_.stats(); }
  Status set_vram_budget(uint64_t bytes) override;
  BatchEngineStats stats() const override;

  HybridSession& session() { return *session_; }

private:
  BatchedHybridSession(const SequenceLimits& limits, std::unique_ptr<Device> device)
      : device_(std::move(device)), seqs_(limits) {}

  std::unique_ptr<Device> device_; // declared first: destroyed after the session
  std::unique_ptr<HybridSession> session_;
  SequencePages seqs_;
  // The page tables as the device reads them (mapped: mapped_tables_).
  Result<const int32_t*> device_view(std::span<int32_t> tables);
  const int32_t* device_tables_ = nullptr;        // seqs_.tables()
  const int32_t* device_window_tables_ = nullptr; // seqs_.window_tables()
  std::vector<const int32_t*> mapped_tables_;
  int64_t n_vocab_ = 0, n_embd_ = 0, max_batch_tokens_ = 0, max_logit_rows_ = 0;
  bool causal_ = true;
  const Schedule* schedule_ = nullptr;
};

} // namespace pshard
