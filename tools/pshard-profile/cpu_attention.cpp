#include "tools/pshard-profile/cpu_attention.h"

#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pshard::profiling {
namespace {

// Eight partial sums so the compiler can keep them in vector lanes without
// reassociating (no -ffast-math).
float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j)
      acc[j] += a[i + j] * b[i + j];
  float sum = 0;
  for (int j = 0; j < 8; ++j)
    sum += acc[j];
  for (; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

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

void reference_attention(const AttentionShape& s, const float* q, const KvCache& kv, float* out,
                         ThreadPool& pool) {
  const int64_t group = std::max<int64_t>(1, s.n_heads / s.n_kv_heads);
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  // Head-major: each KV head's positions are contiguous, so a head streams its cache
  // instead of touching a new page per position.
  const int64_t stride = s.head_dim;
  const int64_t head_stride = kv.max_ctx * s.head_dim;
  const float* kbase = reinterpret_cast<const float*>(kv.k.data());
  const float* vbase = reinterpret_cast<const float*>(kv.v.data());
  pool.parallel_for(s.n_tokens * s.n_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(s.ctx_len));
    for (int64_t th = begin; th < end; ++th) {
      const int64_t h = th % s.n_heads;
      const float* qh = q + th * s.head_dim;
      const float* kh = kbase + (h / group) * head_stride;
      const float* vh = vbase + (h / group) * head_stride;
      float max_score = -INFINITY;
      for (int64_t p = 0; p < s.ctx_len; ++p) {
        scores[p] = dot(qh, kh + p * stride, s.head_dim) * scale;
        max_score = std::max(max_score, scores[p]);
      }
      float total = 0;
      for (int64_t p = 0; p < s.ctx_len; ++p) {
        scores[p] = std::exp(scores[p] - max_score);
        total += scores[p];
      }
      float* o = out + th * s.head_dim;
      std::fill(o, o + s.head_dim, 0.0f);
      for (int64_t p = 0; p < s.ctx_len; ++p) {
        const float w = scores[p] / total;
        const float* vp = vh + p * stride;
        for (int64_t d = 0; d < s.head_dim; ++d)
          o[d] += w * vp[d];
      }
    }
  });
}

fb::AttentionPointT time_cpu_attention(const KvCache& kv, const AttentionShape& s, ThreadPool& pool,
                                       double budget_s) {
  std::vector<float> q(static_cast<size_t>(s.n_tokens * s.n_heads * s.head_dim), 0.05f);
  std::vector<float> out(q.size());
  const Timing t =
      time_repeated([&](int) { reference_attention(s, q.data(), kv, out.data(), pool); }, budget_s);
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
