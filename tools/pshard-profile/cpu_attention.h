// Timing one layer's attention on the CPU — the runtime's own kernel (CpuOps::attention,
// runtime/kernels/attention_kernel.h) — over a KV cache of ctx_len positions plus the
// pass's new tokens: f32 K/V rows, grouped-query heads (Llama-3-8B shape: 32 query
// heads, 8 KV heads, head_dim 128). Single-token passes read the whole cache per token;
// multi-token passes reuse each cached row for every query, so the suite times both.
//
//   KvCache kv(/*max_ctx=*/16384 + 64, shape);
//   fb::AttentionPointT cell = time_cpu_attention(kv, shape_with_ctx, pool, 0.3);
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/profile/device_measurer.h"
#include "schemas/profile_generated.h"
#include "tools/pshard-profile/host_buffer.h"

namespace pshard::profiling {

inline constexpr const char* kCpuAttentionOp =
    "pshard CpuOps::attention (runtime/kernels attention kernel; f32 KV)";

// K and V as [position][n_kv_heads * head_dim] floats, as the runtime's KV cache.
struct KvCache {
  KvCache(int64_t max_ctx, const AttentionShape& shape);
  int64_t max_ctx;
  HostBuffer k;
  HostBuffer v;
};

// shape.n_tokens new queries at positions [ctx_len, ctx_len + n_tokens) over the cache
// (kv.max_ctx must hold them). FLOPs counted as the estimator does: 4 * heads *
// head_dim * ctx_len per new token.
fb::AttentionPointT time_cpu_attention(KvCache& kv, const AttentionShape& shape,
                                       ThreadPool& pool, double budget_s);

} // namespace pshard::profiling
