// One plan's VRAM layout resolved against the model and the session: the arena offset
// of every resident tensor and KV cache, of each streaming slot and of the activation
// buffer — each checked to hold what the runtime will put there, so nothing the
// executor writes can leave its buffer.
#pragma once

#include "runtime/executor/sublayer_tensors.h"
#include "runtime/model/kv_cache.h"

#include <cstdint>
#include <vector>

namespace pshard {

inline constexpr uint64_t kNoOffset = ~0ull;

struct PlanLayout {
  // Per sub-layer: arena offset of each tensor when resident (kNoOffset otherwise).
  std::vector<std::vector<uint64_t>> tensor_offset;
  // Per sub-layer: arena offset of the KV cache of a resident attention sub-layer, which
  // holds kv_positions positions (K rows, then V rows).
  std::vector<uint64_t> kv_offset;
  int64_t kv_positions = 0;
  std::vector<uint64_t> slot_offset; // per streaming slot
  uint64_t activations_offset = kNoOffset;
  uint64_t activations_bytes = 0;
  uint64_t workspace_offset = kNoOffset; // kernel scratch (Device::set_workspace)
  uint64_t workspace_bytes = 0;
  uint64_t arena_bytes = 0;
  // Per sub-layer: arena offset of each resident expert of an expert-level MoE block, by
  // expert id (kNoOffset otherwise; empty for other sub-layers). The buffer holds the
  // expert's slice of each expert tensor in tensor order, each at a multiple of 256.
  std::vector<std::vector<uint64_t>> expert_offset;
};

// Where tensor j's slice sits in a resident expert's buffer (expert_slice_offsets), and
// the buffer's size: each expert tensor's slice, in tensor order, 256-byte aligned.
std::vector<uint64_t> expert_slice_offsets(const SubLayerTensors& t, uint64_t* total);

// Bytes of one layer's KV cache at n positions: K rows then V rows, of the host cache's types.
uint64_t kv_layer_bytes(const KvCache& kv, int64_t n);

// The positions a plan's resident KV caches hold for a host cache (or page pool) of
// kv.n_ctx() rows: its context range for each of the sequences it was compiled for, at
// most the host's rows.
int64_t device_kv_positions(const SchedulePlan& plan, const KvCache& kv);

// Resolves `plan` for a session whose host KV cache is `kv` (its context n_ctx ≤ the one
// compiled for); resident KV caches hold min(plan.context, n_ctx) positions, of the host
// cache's types.
Result<PlanLayout> resolve_layout(const SchedulePlan& plan, const Model& model,
                                  const std::vector<SubLayerTensors>& tensors, const KvCache& kv);

// A plan that runs anything on the device must give it a workspace buffer of at least
// `kernel_bytes` (Device::kernel_workspace_bytes): a schedule compiled against a
// profile without that kernel scratch (an emu or a pre-1.1 profile) is refused with both
// sizes and the fix, instead of the kernels failing mid-pass.
Status check_kernel_workspace(const SchedulePlan& plan, uint64_t kernel_bytes,
                              const std::string& backend);

} // namespace pshard
