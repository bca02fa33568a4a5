#include "tools/pshard-profile/cpu_attention.h"

#include "runtime/backends/cpu/cpu_ops.h"
#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <vector>

namespace pshard::profiling {
namespace {

size_t kv_bytes(int64_t ctx, const AttentionShape& s) {
  return static_cast<size_t>(ctx * s.n_kv_heads * s.head_dim) * sizeof(float);
}

} // namespace

KvCache::KvCache(int64_t max_ctx_in, const AttentionShape& shape)
    : max_ctx(max_ctx_in), k(kv_bytes(max_ctx_in, shape)), v(kv_bytes(max_ctx_in, shape)) {
  // Small distinct values so that softmax is neither flat nor saturated.
  const size_t n = k.size() / sizeof(float);
  float* kp = k.as<float>();
  float* vp = v.as<float>();
  for (size_t i = 0; kp && vp && i < n; ++i) {
    kp[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.01f;
    vp[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.1f;
  }
}

fb::AttentionPointT time_cpu_attention(KvCache& kv, const AttentionShape& s, ThreadPool& pool,
                                       double budget_s) {
  std::vector<float> q(static_cast<size_t>(s.n_tokens * s.n_heads * s.head_dim), 0.05f);
  std::vector<float> out(q.size());
  CpuOps ops(pool);
  const KvView view{kv.k.as<uint8_t>(), kv.v.as<uint8_t>(), kv.max_ctx, s.n_kv_heads * s.head_dim};
  const AttentionDims dims{s.n_heads, s.n_kv_heads, s.head_dim};
  const int64_t pos0 = std::min(s.ctx_len, kv.max_ctx - s.n_tokens);
  const Timing t = time_repeated(
      [&](int) { ops.attention(q.data(), view, dims, pos0, s.n_tokens, out.data()); }, budget_s);
  fb::AttentionPointT p;
  p.ctx_len = static_cast<uint32_t>(s.ctx_len);
  p.n_tokens = static_cast<uint32_t>(s.n_tokens);
  p.n_heads = static_cast<uint32_t>(s.n_heads);
  p.n_kv_heads = static_cast<uint32_t>(s.n_kv_heads);
  p.head_dim = static_cast<uint32_t>(s.head_dim);
  p.threads = static_cast<uint32_t>(pool.size());
  p.seconds = t.seconds;
  p.flops_per_s =
      4.0 * static_cast<double>(s.n_tokens * s.ctx_len * s.head_dim * s.n_heads) / t.seconds;
  p.bytes_per_s = 2.0 * static_cast<double>(kv_bytes(s.ctx_len, s)) / t.seconds;
  p.repetitions = t.repetitions;
  return p;
}

} // namespace pshard::profiling
