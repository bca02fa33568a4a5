// The BatchDecoder the serving tools (pshard_batch_* in the C API, pshard-server,
// pshard-bench's batched mode) run: today a PerSequenceDecoder whose sequences are each a
// HybridSession on a device of its own (the cpu backend: no device), so every sequence
// runs the schedule's plans exactly as pshard-run does. Each session holds its own copy
// of the resident weights, so device memory grows with the sequences and throughput does
// not grow with the batch: the batched engine (one set of weights, a paged KV cache)
// replaces this class behind make_sequence_engine() without changing its callers.
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
#include "runtime/model/model.h"
#include "runtime/schedule/schedule_file.h"

#include <memory>

namespace pshard {

struct SequenceEngineOptions {
  DeviceOptions device;      // backend, VRAM budget (0 with a schedule: its largest)
  int32_t n_threads = 0;     // CPU threads of each sequence's session; 0: all
  int64_t n_ctx = 0;         // positions per sequence; 0: the model's, at most 4096
  int64_t n_batch = 256;     // most tokens in one pass
  int64_t max_sequences = 4; // sequences open at once
  int64_t force_tier = 0;    // benchmarks: every pass runs this compiled tier's plan
};

// Opens (and closes) one sequence to check the options, so a bad budget or backend fails
// here rather than on the first request. `model` and `schedule` must outlive the engine.
Result<std::unique_ptr<BatchDecoder>> make_sequence_engine(const Model& model,
                                                           const Schedule* schedule,
                                                           const SequenceEngineOptions& options);

// Adds `from`'s passes to `into`: plan uses merged by (budget, tier), totals summed, the
// peak the larger.
void merge_session_stats(SessionStats& into, const SessionStats& from);

} // namespace pshard
