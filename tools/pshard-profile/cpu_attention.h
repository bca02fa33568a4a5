// Timing one layer's attention on the CPU over a KV cache of ctx_len positions.
//
// pshard's own attention kernel comes later; until then this times a plain reference
// loop (per query head: q·k over the cache, softmax, weighted sum of v), float K/V,
// grouped-query heads (Llama-3-8B shape: 32 query heads, 8 KV heads, head_dim 128).
// The op name is stored in the profile so that the figures can be told apart from
// those of the real kernel and remeasured.
//
//   KvCache kv(/*max_ctx=*/16384, shape);
//   fb::AttentionPointT cell = time_cpu_attention(kv, shape_with_ctx, pool, 0.3);
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/profile/device_measurer.h"
#include "schemas/profile_generated.h"
#include "tools/pshard-profile/host_buffer.h"

namespace pshard::profiling {

inline constexpr const char* kCpuAttentionOp =
    "reference attention v1 (per-head dot, softmax, weighted sum; f32 KV)";

// K and V as [kv_head][position][head_dim] floats.
struct KvCache {
  KvCache(int64_t max_ctx, const AttentionShape& shape);
  int64_t max_ctx;
  HostBuffer k;
  HostBuffer v;
};

// out[t][h][:] = softmax(q[t][h] · K[:, h/g]) V[:, h/g] over shape.ctx_len positions.
void reference_attention(const AttentionShape& shape, const float* q, const KvCache& kv, float* out,
                         ThreadPool& pool);

fb::AttentionPointT time_cpu_attention(const KvCache& kv, const AttentionShape& shape,
                                       ThreadPool& pool, double budget_s);

} // namespace pshard::profiling
