#include "runtime/serve/sequence_engine.h"

#include "runtime/batch/batched_hybrid_session.h"

#include <algorithm>

namespace pshard {

Result<std::unique_ptr<BatchDecoder>> make_sequence_engine(const Model& model,
                                                           const Schedule* schedule,
                                                           const SequenceEngineOptions& options) {
  if (options.max_sequences < 1)
    return invalid_argument("the engine needs at least one sequence, got " +
                            std::to_string(options.max_sequences));
  if (options.n_batch < 1)
    return invalid_argument("a pass must carry at least one token, got n_batch " +
                            std::to_string(options.n_batch));
  if (model.hparams().has_recurrent_layers() && options.draft_max > 0)
    return invalid_argument(kRecurrentNoDraftsMessage);
  BatchParams bp;
  bp.max_sequences = options.max_sequences;
  bp.n_ctx = options.n_ctx;
  bp.max_batch_tokens = options.n_batch;
  bp.page_tokens = options.page_tokens;
  bp.prefix_cache = options.prefix_cache;
  bp.swa_full = options.swa_full;
  if (options.draft_max < 0)
    return invalid_argument("draft_max must be at least 0, got " +
                            std::to_string(options.draft_max));
  bp.max_logit_rows = std::max<int64_t>(
      options.max_sequences,
      std::min<int64_t>(options.max_sequences * (1 + options.draft_max), options.n_batch));
  bp.n_threads = options.n_threads;
  bp.kv_type_k = options.kv_type_k.value_or(kDefaultKvType);
  bp.kv_type_v = options.kv_type_v.value_or(kDefaultKvType);
  if (!schedule && options.device.backend == DeviceBackend::kCpu) {
    PSHARD_ASSIGN_OR_RETURN(auto engine, BatchedCpuSession::create(model, bp));
    return std::unique_ptr<BatchDecoder>(std::move(engine));
  }
  DeviceOptions d = options.device;
  if (schedule && d.vram_budget == 0) // as pshard-run: the largest compiled budget
    d.vram_budget = schedule->budgets().back();
  PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, make_device(d, schedule));
  PSHARD_ASSIGN_OR_RETURN(auto engine,
                          BatchedHybridSession::create(model, schedule, std::move(device), bp,
                                                       {d.vram_budget, options.force_tier,
                                                        options.kv_type_k, options.kv_type_v}));
  return std::unique_ptr<BatchDecoder>(std::move(engine));
}

} // namespace pshard
