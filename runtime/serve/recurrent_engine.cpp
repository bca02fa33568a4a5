// The serving engine of a model with recurrent layers (Qwen3-Next's Gated DeltaNet) on a
// device: the device batch engine pages KV caches by position and holds no per-sequence
// states, so the one sequence a device serves runs in a session of its own
// (PerSequenceDecoder). Exact, not batched. (On the host, BatchedCpuSession keeps a state
// per sequence slot and batches them.)
#include "runtime/serve/recurrent_engine.h"

#include "runtime/batch/per_sequence_decoder.h"
#include "runtime/executor/hybrid_session.h"

#include <memory>

namespace pshard {

Result<std::unique_ptr<BatchDecoder>> make_recurrent_engine(const Model& model,
                                                            const Schedule* schedule,
                                                            const SequenceEngineOptions& o) {
  const ModelHParams& hp = model.hparams();
  if (o.max_sequences > 1)
    return invalid_argument("a model with recurrent layers serves one sequence at a time on a "
                            "device (each sequence is a session of its own); use --parallel 1, "
                            "or the cpu backend without a schedule for several");
  const DeviceOptions d = engine_device_options(o, schedule);
  PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Device> made, make_device(d, schedule));
  std::shared_ptr<Device> device = std::move(made);
  HybridParams p;
  p.n_ctx = o.n_ctx;
  p.n_threads = o.n_threads;
  p.vram_budget = d.vram_budget;
  p.n_batch = o.n_batch;
  p.force_tier = o.force_tier;
  p.kv_type_k = o.kv_type_k;
  p.kv_type_v = o.kv_type_v;
  auto open = [&model, schedule, device, p]() -> Result<std::unique_ptr<Decoder>> {
    PSHARD_ASSIGN_OR_RETURN(auto s, HybridSession::create(model, schedule, device.get(), p));
    return std::unique_ptr<Decoder>(std::move(s));
  };
  PSHARD_RETURN_IF_ERROR(open().status()); // bad options fail now, not on the first request
  return std::unique_ptr<BatchDecoder>(new PerSequenceDecoder(1, o.n_batch, hp.n_vocab, open));
}

} // namespace pshard
