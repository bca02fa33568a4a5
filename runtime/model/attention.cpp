// The attention sub-layer: RMSNorm, Q/K/V projections, RoPE, causal grouped-query
// attention over the KV cache, output projection, residual.
#include "runtime/kernels/ops.h"
#include "runtime/model/sublayer.h"

#include <cmath>
#include <vector>

namespace pshard {
namespace {

// One query head of one token over cache positions [0, n_kv): two-pass softmax so
// the result does not depend on how the work is split.
void attend_one_head(const float* q, const KvCache& kv, int64_t layer, int64_t kv_offset,
                     int64_t n_kv, int64_t head_dim, float scale, float* out,
                     std::vector<float>& scores) {
  scores.resize(static_cast<size_t>(n_kv));
  for (int64_t j = 0; j < n_kv; ++j) {
    const float* k = kv.k(layer, j) + kv_offset;
    float s = 0.0f;
    for (int64_t i = 0; i < head_dim; ++i)
      s += q[i] * k[i];
    scores[static_cast<size_t>(j)] = s * scale;
  }
  softmax(scores.data(), n_kv);
  for (int64_t i = 0; i < head_dim; ++i)
    out[i] = 0.0f;
  for (int64_t j = 0; j < n_kv; ++j) {
    const float* v = kv.v(layer, j) + kv_offset;
    const float w = scores[static_cast<size_t>(j)];
    for (int64_t i = 0; i < head_dim; ++i)
      out[i] += w * v[i];
  }
}

} // namespace

void attention_forward(ForwardPass& p, int64_t layer) {
  const AttentionWeights& w = p.weights.layers[static_cast<size_t>(layer)].attn;
  const LlamaHParams& hp = p.hp;
  Activations& a = p.act;
  const int64_t n = p.n_tokens(), d = hp.n_embd, hd = hp.head_dim;
  const int64_t q_dim = hp.q_dim(), kv_dim = hp.kv_dim();

  for (int64_t t = 0; t < n; ++t)
    rms_norm(a.hidden.data() + t * d, w.norm.data, a.normed.data() + t * d, d, hp.rms_eps);
  matmul(w.wq, a.normed.data(), n, a.q.data(), p.pool);
  matmul(w.wk, a.normed.data(), n, a.k.data(), p.pool);
  matmul(w.wv, a.normed.data(), n, a.v.data(), p.pool);

  const RopeParams rope_params{hd, hp.rope_dim, hp.rope_freq_base, hp.rope_freq_scale,
                               p.weights.rope_freqs.data};
  for (int64_t t = 0; t < n; ++t) {
    const int64_t pos = p.pos0 + t;
    rope(a.q.data() + t * q_dim, hp.n_head, pos, rope_params);
    rope(a.k.data() + t * kv_dim, hp.n_head_kv, pos, rope_params);
    std::copy_n(a.k.data() + t * kv_dim, kv_dim, p.kv.k(layer, pos));
    std::copy_n(a.v.data() + t * kv_dim, kv_dim, p.kv.v(layer, pos));
  }

  const int64_t group = hp.n_head / hp.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  p.pool.parallel_for(n * hp.n_head, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / hp.n_head, h = item % hp.n_head;
      attend_one_head(a.q.data() + t * q_dim + h * hd, p.kv, layer, (h / group) * hd,
                      p.pos0 + t + 1, hd, scale, a.attn_out.data() + t * q_dim + h * hd, scores);
    }
  });

  matmul(w.wo, a.attn_out.data(), n, a.proj.data(), p.pool);
  add_inplace(a.hidden.data(), a.proj.data(), n * d);
}

} // namespace pshard
