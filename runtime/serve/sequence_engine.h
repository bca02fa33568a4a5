// The BatchDecoder the serving tools (pshard_batch_* in the C API, pshard-server,
// pshard-bench's batched mode) run: one forward pass over every sequence's new tokens
// per decode(), over one set of weights and one paged KV cache, so throughput grows with
// the batch. Without a schedule on the cpu backend it is a BatchedCpuSession; with a
// schedule (or a device) a BatchedHybridSession, which runs the schedule's plans — the
// pass's tier its total new tokens — on the device (cpu: looked up, run on the host). A
// model with recurrent layers keeps one state per sequence slot beside the pages (no
// prefix sharing, no drafts).
//
//   SequenceEngineOptions o;
//   o.device.backend = DeviceBackend::kEmu;
//   o.device.vram_budget = 512ull << 20;
//   o.max_sequences = 4;
//   PSHARD_ASSIGN_OR_RETURN(auto engine, make_sequence_engine(*model, &schedule, o));
//   Scheduler scheduler(*engine, tokenizer, {});
#pragma once

#include "runtime/backends/device_factory.h"
#include "runtime/batch/batch_decoder.h"
#include "runtime/model/kv_ring.h"
#include "runtime/model/kv_types.h"
#include "runtime/model/model.h"
#include "runtime/schedule/schedule_file.h"

#include <memory>
#include <optional>

namespace pshard {

struct SequenceEngineOptions {
  DeviceOptions device;      // backend, VRAM budget (0 with a schedule: its largest)
  int32_t n_threads = 0;     // CPU threads; 0: all
  int64_t n_ctx = 0;         // positions per sequence; 0: the model's, at most 4096
  int64_t n_batch = 256;     // most tokens in one pass
  int64_t max_sequences = 4; // sequences open at once
  int64_t force_tier = 0;    // benchmarks: every pass runs this compiled tier's plan
  int64_t page_tokens = kKvPageTokens; // positions per KV page
  // Share the KV pages of prompts' common starts between requests (a system prompt, the
  // earlier turns of a chat): runtime/batch/prefix_cache.h.
  bool prefix_cache = true;
  // Sliding-window layers keep every position instead of their last window's KV pages
  // (runtime/batch/window_pages.h; llama.cpp's --swa-full).
  bool swa_full = false;
  // Speculative decoding (SchedulerOptions::draft_max): logits rows for every sequence's
  // drafted tokens too.
  int32_t draft_max = 0;
  // KV cache element types (runtime/model/kv_types.h); unset: the schedule's --kv-type,
  // or kDefaultKvType (F16) without one.
  std::optional<TensorType> kv_type_k, kv_type_v;
};

// Checks the options (a bad budget, backend or KV type fails here rather than on the
// first request). `model` and `schedule` must outlive the engine.
Result<std::unique_ptr<BatchDecoder>> make_sequence_engine(const Model& model,
                                                           const Schedule* schedule,
                                                           const SequenceEngineOptions& options);

} // namespace pshard
