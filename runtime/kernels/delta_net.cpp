#include "runtime/kernels/delta_net.h"

#include "runtime/core/thread_pool.h"
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace pshard {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
float silu(float x) { return x * sigmoid(x); }

// x / max(|x|, eps) over n values, as llama.cpp's ggml_l2_norm.
void l2_normalize(float* x, int64_t n, float eps, float scale) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(x[i]) * x[i];
  const float inv = scale / std::max(static_cast<float>(std::sqrt(sum)), eps);
  for (int64_t i = 0; i < n; ++i)
    x[i] *= inv;
}

// kConvLanes channels' sums at once (fewer at the end: `left`): tap j's weights times row
// j's inputs, added oldest first from 0 — the scalar sum's order. Lanes of a fixed count
// in a local array, so the compiler keeps them in vector registers.
constexpr size_t kConvLanes = 8;
constexpr int64_t kMaxConvTaps = 8; // ssm.conv_kernel is checked at load (hparams_delta_net.cpp)
void conv_lanes(const float* taps, const float* const* rows, int64_t n_taps, size_t w, size_t c,
                size_t left, float* out) {
  float a[kConvLanes] = {};
  if (left >= kConvLanes) {
    for (int64_t j = 0; j < n_taps; ++j)
      for (size_t u = 0; u < kConvLanes; ++u)
        a[u] += taps[j * w + u] * rows[j][c + u];
    std::copy(a, a + kConvLanes, out);
    return;
  }
  for (int64_t j = 0; j < n_taps; ++j)
    for (size_t u = 0; u < left; ++u)
      a[u] += taps[j * w + u] * rows[j][c + u];
  std::copy(a, a + left, out);
}

// The causal conv and SiLU over every channel of n tokens, in place, then the state keeps
// the last conv_kernel − 1 inputs. Channels are independent: split over the pool. Each
// part reads the rows token by token (a row holds every channel) and keeps its channels'
// last inputs in a ring; walking one channel down the tokens touched a cache line per
// token, a row (32 KiB at Qwen3-Next's width) apart. Each output is the same sum in the
// same order, oldest input first, so the same bits.
void convolve(ThreadPool& pool, const DeltaNetDims& d, const float* conv, float* mixed,
              float* conv_state, bool fresh, int64_t n) {
  const int64_t c_dim = d.conv_dim(), taps = d.conv_kernel, kept = taps - 1;
  pool.parallel_for(c_dim, [&](int64_t c0, int64_t c1) {
    const auto w = static_cast<size_t>(c1 - c0);
    std::vector<float> ring(static_cast<size_t>(kept) * w), taps_of(static_cast<size_t>(taps) * w),
        acc(w);
    for (int64_t j = 0; j < taps; ++j) // tap-major: tap j of every channel in a row
      for (size_t c = 0; c < w; ++c)
        taps_of[j * w + c] = conv[(c0 + static_cast<int64_t>(c)) * taps + j];
    for (int64_t j = 0; j < kept; ++j) // oldest first
      for (size_t c = 0; c < w; ++c)
        ring[j * w + c] = fresh ? 0.0f : conv_state[j * c_dim + c0 + static_cast<int64_t>(c)];
    int64_t oldest = 0; // the ring's row of the oldest kept input
    const float* rows[kMaxConvTaps];
    for (int64_t t = 0; t < n; ++t) {
      float* x = mixed + t * c_dim + c0;
      for (int64_t j = 0; j < kept; ++j)
        rows[j] = ring.data() + ((oldest + j) % kept) * w;
      rows[kept] = x;
      for (size_t c = 0; c < w; c += kConvLanes)
        conv_lanes(taps_of.data() + c, rows, taps, w, c, w - c, acc.data() + c);
      if (kept > 0) { // this input replaces the oldest kept one
        std::copy(x, x + w, ring.begin() + oldest * static_cast<int64_t>(w));
        oldest = (oldest + 1) % kept;
      }
      for (size_t c = 0; c < w; ++c)
        x[c] = silu(acc[c]);
    }
    for (int64_t j = 0; j < kept; ++j)
      std::copy_n(ring.begin() + ((oldest + j) % kept) * static_cast<int64_t>(w), w,
                  conv_state + j * c_dim + c0);
  });
}

} // namespace

namespace kernels::scalar {

void delta_step(const DeltaStep& a) {
  for (int64_t j = 0; j < a.d_v; ++j)
    a.delta[j] = 0.0f;
  for (int64_t i = 0; i < a.d_k; ++i) { // S ← S·decay, delta accumulates Sᵀk
    float* row = a.s + i * a.d_v;
    for (int64_t j = 0; j < a.d_v; ++j) {
      row[j] *= a.decay;
      a.delta[j] += row[j] * a.k[i];
    }
  }
  for (int64_t j = 0; j < a.d_v; ++j)
    a.delta[j] = (a.v[j] - a.delta[j]) * a.beta;
  for (int64_t j = 0; j < a.d_v; ++j)
    a.out[j] = 0.0f;
  for (int64_t i = 0; i < a.d_k; ++i) { // S += k ⊗ delta, out accumulates Sᵀq
    float* row = a.s + i * a.d_v;
    for (int64_t j = 0; j < a.d_v; ++j) {
      row[j] += a.k[i] * a.delta[j];
      a.out[j] += row[j] * a.q[i];
    }
  }
}

} // namespace kernels::scalar

int64_t delta_net_state_rows(const DeltaNetDims& d, size_t k_row, size_t v_row) {
  const size_t conv = d.conv_state_floats() * sizeof(float);
  const size_t head = d.head_state_floats() * sizeof(float);
  const auto heads = static_cast<size_t>(d.n_v_heads);
  // Rows for the whole state laid end to end, then more until the heads fit whole.
  int64_t rows = static_cast<int64_t>((conv + heads * head + k_row + v_row - 1) / (k_row + v_row));
  for (;; ++rows) {
    const size_t k_bytes = static_cast<size_t>(rows) * k_row;
    const size_t v_bytes = static_cast<size_t>(rows) * v_row;
    if (k_bytes < conv)
      continue;
    if ((k_bytes - conv) / head + v_bytes / head >= heads)
      return rows;
  }
}

DeltaNetState delta_net_state(const DeltaNetDims& d, uint8_t* k, uint8_t* v, int64_t rows,
                              size_t k_row) {
  DeltaNetState s;
  s.conv = reinterpret_cast<float*>(k);
  s.k_heads = s.conv + d.conv_state_floats();
  const size_t room = static_cast<size_t>(rows) * k_row - d.conv_state_floats() * sizeof(float);
  s.heads_in_k = std::min<int64_t>(
      static_cast<int64_t>(room / (d.head_state_floats() * sizeof(float))), d.n_v_heads);
  s.v_heads = reinterpret_cast<float*>(v);
  return s;
}

void delta_net_forward(ThreadPool& pool, const DeltaNetDims& d, const float* conv,
                       const float* ssm_a, const float* dt_bias, float* mixed, const float* b,
                       const float* a, int64_t ba_stride, const DeltaNetState& state, int64_t pos0,
                       int64_t n, float* out) {
  const bool fresh = pos0 == 0;
  convolve(pool, d, conv, mixed, state.conv, fresh, n);
  const int64_t c_dim = d.conv_dim(), dk = d.d_k, dv = d.d_v;
  // q and k per head: normalised once for all the v heads that read them.
  pool.parallel_for(n * d.n_k_heads, [&](int64_t i0, int64_t i1) {
    const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    for (int64_t i = i0; i < i1; ++i) {
      float* row = mixed + (i / d.n_k_heads) * c_dim + (i % d.n_k_heads) * dk;
      l2_normalize(row, dk, d.eps, q_scale);
      l2_normalize(row + d.key_dim(), dk, d.eps, 1.0f);
    }
  });
  const size_t hf = d.head_state_floats();
  void (*step)(const DeltaStep&) = kernels::kernel_set().ops.delta_step;
  pool.parallel_for(d.n_v_heads, [&](int64_t h0, int64_t h1) {
    std::vector<float> delta(static_cast<size_t>(dv));
    for (int64_t h = h0; h < h1; ++h) {
      float* s = state.head(h, hf);
      if (fresh)
        std::memset(s, 0, hf * sizeof(float));
      const int64_t kh = d.k_head(h);
      for (int64_t t = 0; t < n; ++t) {
        const float* q = mixed + t * c_dim + kh * dk;
        const float* k = q + d.key_dim();
        const float* v = mixed + t * c_dim + 2 * d.key_dim() + h * dv;
        const float beta = sigmoid(b[t * ba_stride + d.b_index(h)]);
        const float decay =
            std::exp(softplus(a[t * ba_stride + d.a_index(h)] + dt_bias[h]) * ssm_a[h]);
        step(DeltaStep{s, k, q, v, decay, beta, dk, dv, delta.data(),
                       out + t * d.value_dim() + h * dv});
      }
    }
  });
}

} // namespace pshard
