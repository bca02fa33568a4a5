// A generation session that executes a schedule's plans across the CPU and a device.
//
//   PSHARD_ASSIGN_OR_RETURN(auto schedule, Schedule::load_file("model.pshard"));
//   PSHARD_ASSIGN_OR_RETURN(auto device, EmuDevice::create(emu_options));
//   HybridParams params;
//   params.vram_budget = 2ull << 30;
//   PSHARD_ASSIGN_OR_RETURN(auto session,
//       HybridSession::create(*model, &schedule, device.get(), params));
//   PSHARD_ASSIGN_OR_RETURN(auto logits, session->decode(prompt_ids));
//   PSHARD_RETURN_IF_ERROR(session->set_budget(512ull << 20));   // the app needs VRAM back
//
// Each forward pass looks its plan up — the smallest tier holding its new tokens, the
// smallest context range holding the positions it reaches, the largest compiled budget
// within the budget in force — and runs it (pass_runner.h); a prompt longer than the
// largest tier runs in chunks of it. Nothing is planned at run time. Without a schedule
// every sub-layer runs on the CPU; without a device (the cpu backend) the plans are
// looked up and reported but run on the CPU. On cpu and emu the results are
// bit-identical whatever the plan.
//
// The arena holds the resident weights and KV caches of one plan. Moving to another plan
// — a tier change, the context crossing a range, a budget change (set_budget) — happens
// between passes and moves residency the same way: KV caches the new plan does not keep
// in place go to the host, weights it adds are uploaded from the mapping, KV caches it
// adds are filled from the host; a buffer at the same offset with the same size in both
// plans stays untouched. Within a budget the arena keeps its size (the largest plan's);
// across budgets device memory first shrinks, then grows: it never exceeds the larger of
// the two budgets, and is within the new one when set_budget returns.
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/executor/pass_runner.h"
#include "runtime/executor/plan_runtime.h"
#include "runtime/executor/session_stats.h"
#include "runtime/executor/timeline.h"
#include "runtime/model/decoder.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

namespace pshard {

struct HybridParams {
  int64_t n_ctx = 0;        // 0: the model's training context, capped at 4096 and at the
                            // context the schedule was compiled for
  int32_t n_threads = 0;    // CPU threads; 0: all hardware threads
  uint64_t vram_budget = 0; // bytes the device may use (schedule and device only)
  int64_t n_batch = 256;    // without a schedule: most tokens per pass
  int64_t force_tier = 0;   // tests and benchmarks: every pass uses the plan of this
                            // compiled tier (longer inputs run in chunks of it); 0: lookup
  // KV cache element types (runtime/model/kv_types.h); unset: the schedule's (its
  // --kv-type), or kDefaultKvType without one. With a schedule they must be its type.
  std::optional<TensorType> kv_type_k, kv_type_v;
  // Batch engines (runtime/batch/batched_hybrid_session.h): the host KV cache is a pool
  // of kv_pool_rows rows in pages of kv_page_tokens, shared by up to `sequences`
  // sequences of n_ctx positions each, and a pass returns up to max_logit_rows rows of
  // logits. 0: one sequence, a contiguous cache of n_ctx positions.
  int64_t kv_pool_rows = 0;
  int64_t kv_page_tokens = 0;
  // With a batch's sliding-window pool (runtime/batch/window_pages.h): the rows of the
  // sliding-window layers' pools; 0: theirs are kv_pool_rows too.
  int64_t kv_window_pool_rows = 0;
  int64_t sequences = 1;
  int64_t max_logit_rows = 1;
  // Whole KV caches for sliding-window layers instead of rings (kv_ring.h), so a rewind
  // may go anywhere (llama.cpp's --swa-full); with a schedule, one compiled with
  // pshard-compile --swa-full.
  bool swa_full = false;
};

// One pass of a batch: the tokens regrouped by sequence, each segment's positions and
// page table — in host memory (`segments`, for attention on the CPU) and as the device
// reads it (`device_segments`, same order) — the rows whose logits come back, the most
// positions a sequence reaches and the pool rows in use once the pass has run.
struct BatchPassInput {
  std::span<const TokenId> tokens;
  std::span<const SeqSegment> segments, device_segments;
  std::span<const int64_t> logit_rows;
  int64_t longest = 0;
  int64_t rows_in_use = 0;
  // Image tokens (a VLM's prompts): 3 M-RoPE positions per token (empty: none), and the
  // rows that replace image tokens' embeddings (PassContext::replace_rows).
  std::span<const int32_t> rope_positions = {};
  std::span<const std::pair<int64_t, const float*>> embedding_rows = {};
  // Tokens whose embedding rows (final hidden state after the output norm) come back,
  // in order: HybridSession::embeddings() after the pass.
  std::span<const int64_t> hidden_rows = {};
  // With a sliding-window pool (HybridParams::kv_window_pool_rows): its segments, on the
  // host and for the device, and its rows in use.
  std::span<const SeqSegment> window_segments = {}, device_window_segments = {};
  int64_t window_rows_in_use = 0;
  std::span<const DeepstackRow> deepstack = {}; // image tokens' DeepStack rows (host)
};

class HybridSession final : public MultimodalDecoder {
public:
  // `schedule` and `device` may be null (see above); both must outlive the session.
  static Result<std::unique_ptr<HybridSession>> create(const Model& model,
                                                       const Schedule* schedule, Device* device,
                                                       const HybridParams& params);
  ~HybridSession() override;

  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override;
  // decode() with an image's embedding rows and/or M-RoPE positions (image_prompt.h).
  // The embed sub-layer of a pass fed embedding rows runs on the host (the rows are host
  // memory) whatever its placement; everything else runs as planned.
  Result<std::span<const float>> decode(std::span<const TokenId> tokens,
                                        const DecodeExtras& extra) override;
  // Batch mode (kv_pool_rows set): one forward pass over several sequences' tokens, at
  // most max_tokens_per_pass() of them; logits row i (of n_vocab) is logit_rows[i]'s.
  Result<const float*> decode_batch(const BatchPassInput& pass);
  // Every token's logits in one pass (speculative decoding; at most max_logit_rows(),
  // HybridParams::max_logit_rows capped at the largest tier), and dropping positions:
  // the next pass writes its KV rows over theirs, wherever the plan keeps them
  // (benchmarks also re-run a pass at a fixed context this way).
  Result<std::span<const float>> decode_all(std::span<const TokenId> tokens) override;
  int64_t max_logit_rows() const override;
  bool rewinds_anywhere() const override { return !model_.hparams().has_recurrent_layers(); }
  Status rewind(int64_t n_past) override;
  // Final hidden states after the output norm (decoder.h), one pass of up to the largest
  // tier a call, whatever plan runs it (bit-identical on cpu and emu).
  int64_t max_embedding_rows() const override;
  Result<std::span<const float>> decode_embeddings(std::span<const TokenId> tokens) override;
  // The embedding rows of the last decode_embeddings or decode_batch (its hidden_rows).
  std::span<const float> embeddings() const { return embeddings_; }
  int64_t n_past() const override { return n_past_; }
  int64_t n_ctx() const override { return n_ctx_; }
  void reset() {
    n_past_ = 0;
    kv_.restart();
  }
  // A saved sequence back (session_state.h): with the device released and the first
  // n_past positions' rows written into host_kv(), the session holds those positions;
  // the next pass uploads its plan's resident set and KV rows.
  Status restore_positions(int64_t n_past);

  // Moves to the plans of the largest compiled budget ≤ bytes. kOutOfMemory naming the
  // smallest compiled budget when bytes is below it (the session keeps its budget);
  // 0 runs everything on the CPU and frees the device memory.
  Status set_budget(uint64_t bytes);
  uint64_t budget() const { return budget_; }
  // Frees the device arena for another phase that shares it in time (a VLM's vision
  // phase, runtime/executor/vision_phase.h): KV caches on the device go to the host, and
  // the next pass uploads its plan's resident set again. Nothing to do without a device.
  Status release_device();
  // The plan whose resident set the arena holds (none before the first pass and when
  // running on the CPU only).
  std::optional<PlanIndex> resident_plan() const { return held_; }

  const SessionStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  // Slices of every pass go to `timeline` (null: none); it must outlive its use.
  void set_timeline(Timeline* timeline) { timeline_ = timeline; }
  int32_t n_threads() const { return pool_->size(); }
  // Host memory the session allocated: KV cache plus activations.
  size_t host_bytes() const { return kv_.bytes() + act_.bytes(); }
  // The host KV cache (in batch mode, the page pool the segments' tables index).
  KvCache& host_kv() { return kv_; }
  // The largest tier (chunk size of a long prompt).
  int64_t max_tokens_per_pass() const { return max_chunk_; }

private:
  HybridSession(const Model& model, const Schedule* schedule, Device* device, KvCache kv,
                int32_t threads);
  Status forward_chunk(std::span<const TokenId> tokens, bool compute_logits,
                       const DecodeExtras& extra = {});
  PassContext pass_context(std::span<const TokenId> tokens, int64_t pos0, bool compute_logits);
  // Looks the pass's plan up, runs it and records it; `positions`: the most a sequence
  // reaches.
  Status run_and_record(PassContext& ctx, int64_t positions);
  // The positions plans are selected by: a batch takes the plans of a whole sequence's
  // context (its device KV pages hold every sequence), one sequence its own.
  int64_t select_positions(int64_t reached) const { return kv_page_tokens_ > 0 ? n_ctx_ : reached; }
  // The KV rows in use, which residency moves copy: one sequence's positions, or the
  // rows the batch's pages span.
  int64_t kv_rows() const { return kv_page_tokens_ > 0 ? batch_rows_ : n_past_; }
  // The rows of layer il's cache a move copies, and the rows the schedule's switch
  // records count for it (the schedule's ring or window pool for a sliding-window layer,
  // at most; a batch's window pool moves the rows its pages span).
  int64_t kv_rows_moved(int64_t il) const {
    return kv_page_tokens_ > 0 && kv_.ring(il) > 0 ? batch_window_rows_
                                                   : kv_.rows_held(il, kv_rows());
  }
  int64_t kv_rows_recorded(int64_t il) const;
  Status check_batch_capacity(int64_t sequences) const;
  Result<PlanRuntime*> plan_runtime(PlanIndex at);
  // The plan a pass of `n_tokens` new tokens reaching `positions` uses, or null (CPU only).
  Result<const SchedulePlan*> plan_for_pass(int64_t n_tokens, int64_t positions, PlanIndex* at);
  // residency.cpp: moving the arena to another plan's resident set (none: CPU only).
  Status move_residency(std::optional<PlanIndex> to, bool budget_switch);
  Result<int> budget_index_for(uint64_t bytes) const;
  uint64_t arena_bytes_for(int budget_index) const;
  struct Moved {
    uint64_t weights_up = 0, kv_up = 0, kv_down = 0;
    uint64_t kv_up_recorded = 0, kv_down_recorded = 0; // as the switch records count them
    uint64_t state_up = 0, state_down = 0;             // recurrent layers' states, whole
  };
  Status evict_kv(const std::optional<PlanLayout>& from, const std::optional<PlanLayout>& to,
                  Moved* moved);
  Status upload(const PlanLayout& to, const std::optional<PlanLayout>& kept_from, Moved* moved);
  Status check_recorded(PlanIndex from, PlanIndex to, const Moved& moved) const;
  Status fall_back_to_cpu(const Status& why);

  const Model& model_;
  const Schedule* schedule_;
  Device* device_;
  std::vector<SubLayerTensors> tensors_;
  std::vector<SubLayerWeights> host_weights_;
  KvCache kv_;
  Activations act_;
  std::vector<float> embeddings_; // embedding rows of the last pass that asked for them
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<CpuOps> cpu_;
  std::unique_ptr<EventPool> events_;
  int64_t n_ctx_ = 0;
  int64_t n_past_ = 0;
  int64_t max_chunk_ = 256;
  int64_t max_logit_rows_ = 1;
  int64_t force_tier_ = 0;
  int64_t kv_page_tokens_ = 0; // batch mode: the pool's page size
  int64_t batch_rows_ = 0;     // batch mode: pool rows in use
  int64_t batch_window_rows_ = 0; // batch mode: sliding-window pool rows in use
  uint64_t budget_ = 0;
  int budget_index_ = -1;          // the compiled budget in force; -1: CPU only
  std::optional<PlanIndex> held_;  // the plan whose resident set the arena holds
  std::optional<PlanLayout> resident_layout_;
  std::map<std::tuple<size_t, size_t, size_t>, PlanRuntime> plans_; // (budget, context, tier)
  SessionStats stats_;
  Timeline* timeline_ = nullptr;
  std::vector<const void*> registered_host_; // the model files' images, for unregistering
  std::vector<void*> mapped_host_;           // KV cache mapped by any plan, likewise
  bool budget_set_ = false; // a budget is in force (messages say which one is kept)
};

} // namespace pshard
