// One forward pass of a plan: a plain loop over the sub-layers in order, nothing
// decided at run time. CPU sub-layers run on the host now; device sub-layers are
// enqueued on the compute queue; streamed weights are copied into their slots on the
// copy queue as far ahead as the plan allows (copy k waits for streamed sub-layer
// k − slots to free its slot and for k − prefetch_depth, as the planner's estimator
// simulates), so copies run while the CPU works; the hidden state crosses between host
// and device only where the placement changes.
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/executor/plan_runtime.h"
#include "runtime/executor/session_stats.h"
#include "runtime/executor/timeline.h"
#include "runtime/model/deepstack.h"

namespace pshard {

struct PassContext {
  const Model& model;
  const std::vector<SubLayerWeights>& host_weights;
  const std::vector<SubLayerTensors>* tensors; // with a schedule
  CpuOps& cpu;
  const ActivationPtrs& host_act;
  KvCache& host_kv;
  Device* device = nullptr;    // null: every sub-layer on the CPU
  PlanRuntime* plan = nullptr; // null: every sub-layer on the CPU
  EventPool* events = nullptr;
  Timeline* timeline = nullptr; // null: no slices recorded
  std::span<const TokenId> tokens;
  int64_t pos0 = 0;
  bool compute_logits = true;
  // Embeddings: the pass ends with every token's hidden state in host_act.hidden, wherever
  // its last sub-layer ran.
  bool hidden_to_host = false;
  // A batch (empty: one sequence at pos0): each sequence's tokens, positions and page
  // table (sublayer.h's SeqSegment) — `segments` with tables in host memory for CPU-run
  // attention, `device_segments` the same with tables the device reads; the KV caches
  // are then page pools of page_tokens-position pages. logit_rows: the tokens whose
  // logits come back (empty: the last).
  std::span<const SeqSegment> segments = {}, device_segments = {};
  // The same for the sliding-window layers when they have their own pages (empty: not).
  std::span<const SeqSegment> window_segments = {}, device_window_segments = {};
  std::span<const int64_t> logit_rows = {};
  int64_t page_tokens = 0;
  // An image prompt (DecodeExtras): the embed sub-layer reads these host rows (the
  // tokens are row indices) and runs on the host; M-RoPE positions, 3 per token, host
  // memory (ops.h reads them there on every backend).
  const MatrixView* embed_rows = nullptr;
  std::span<const int32_t> rope_positions = {};
  int64_t n_ctx = 0; // positions per sequence (ForwardPass::n_ctx)
  // A batch pass holding image tokens: the embed sub-layer embeds every token (the image
  // tokens' ids are placeholders) on the host, then these rows (token index, n_embd host
  // floats) replace the image tokens' rows, as BatchedCpuSession does.
  std::span<const std::pair<int64_t, const float*>> replace_rows = {};
  // An image's DeepStack rows, added after their layers (host memory).
  std::span<const DeepstackRow> deepstack = {};
};

// Runs the pass and waits for all its device work. Fills bytes and measured_ms.
Result<PassStats> run_pass(PassContext& ctx);

} // namespace pshard
