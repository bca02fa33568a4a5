// Gated DeltaNet: the linear-attention layers of Qwen3-Next and Qwen3.5, a recurrence over a
// fixed state instead of attention over a cache that grows with the context.
//
// Per token, the mixed stream [q of n_k heads | k of n_k heads | v of n_v heads] (one
// projection, conv_dim values) passes a causal depthwise convolution of conv_kernel taps
// (the last tap on the token itself, the earlier ones on the previous tokens' streams,
// which the state keeps) and a SiLU. q and k are L2-normalised per head, q scaled by
// 1/sqrt(d_k). Each v head h reads the k head of its group (h / (n_v / n_k), or with
// tiled_heads h % n_k: Qwen3.5's converters reorder the v heads so), and keeps a d_k x d_v
// matrix S:
//   beta = sigmoid(b_h),  g = softplus(a_h + dt_bias_h) · ssm_a_h  (ssm_a = -exp(A_log))
//   S ← S · exp(g);  delta = (v − Sᵀk) · beta;  S ← S + k ⊗ delta;  out_h = Sᵀq
// b and a come per token either grouped — per k head its v heads' b then their a (Qwen3-
// Next's ssm_ba) — or as two rows of n_v values (Qwen3.5's ssm_beta and ssm_alpha).
//
// The state of one sequence is the conv inputs of the last conv_kernel − 1 tokens and one S
// per v head. It lives in a layer's KV cache rows (runtime/model/kv_cache.h): the K region
// holds the conv inputs and then as many whole S as fit, the V region the rest, so a device
// moves it as it moves any layer's cache. A pass at position 0 starts from a zero state
// whatever the rows hold, which is how a sequence starts afresh.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__) // the CUDA kernels read these too (runtime/backends/cuda)
#define PSHARD_DELTA_NET_HD __host__ __device__
#else
#define PSHARD_DELTA_NET_HD
#endif

namespace pshard {

class ThreadPool;

struct DeltaNetDims {
  int64_t n_k_heads = 0; // ssm.group_count
  int64_t n_v_heads = 0; // ssm.time_step_rank
  int64_t d_k = 0;       // ssm.state_size
  int64_t d_v = 0;       // ssm.inner_size / n_v_heads
  int64_t conv_kernel = 0;
  float eps = 1e-6f; // of the L2 norms (the model's RMS eps, as llama.cpp)
  bool grouped_ba = true;
  bool tiled_heads = false;

  PSHARD_DELTA_NET_HD int64_t key_dim() const { return n_k_heads * d_k; }
  PSHARD_DELTA_NET_HD int64_t value_dim() const { return n_v_heads * d_v; }
  PSHARD_DELTA_NET_HD int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  // The k head v head h reads.
  PSHARD_DELTA_NET_HD int64_t k_head(int64_t h) const {
    return tiled_heads ? h % n_k_heads : h / (n_v_heads / n_k_heads);
  }
  // Where v head h's b and a are in a token's row of b (a) values.
  PSHARD_DELTA_NET_HD int64_t b_index(int64_t h) const {
    if (!grouped_ba)
      return h;
    const int64_t r = n_v_heads / n_k_heads;
    return (h / r) * 2 * r + h % r;
  }
  PSHARD_DELTA_NET_HD int64_t a_index(int64_t h) const {
    return grouped_ba ? b_index(h) + n_v_heads / n_k_heads : h;
  }
  PSHARD_DELTA_NET_HD size_t conv_state_floats() const {
    return static_cast<size_t>((conv_kernel - 1) * conv_dim());
  }
  PSHARD_DELTA_NET_HD size_t head_state_floats() const { return static_cast<size_t>(d_k * d_v); }
};

// A sequence's state split over the K and V regions: the conv inputs at k, then
// heads_in_k matrices; the rest from v.
struct DeltaNetState {
  float* conv = nullptr;
  float* k_heads = nullptr;
  int64_t heads_in_k = 0;
  float* v_heads = nullptr;

  PSHARD_DELTA_NET_HD float* head(int64_t h, size_t head_floats) const {
    return h < heads_in_k ? k_heads + static_cast<size_t>(h) * head_floats
                          : v_heads + static_cast<size_t>(h - heads_in_k) * head_floats;
  }
};

// One token of one v head, the recurrence's inner loops (kernel_set.h's delta_step, one per
// ISA path): S (d_k rows of d_v) times decay; delta = (v − Sᵀk) · beta in `delta`;
// S += k ⊗ delta; out = Sᵀq. Two sweeps over S, each row read and written once a sweep.
struct DeltaStep {
  float* s = nullptr;
  const float *k = nullptr, *q = nullptr, *v = nullptr;
  float decay = 1.0f, beta = 0.0f;
  int64_t d_k = 0, d_v = 0;
  float* delta = nullptr; // d_v values of scratch
  float* out = nullptr;
};

// The fewest cache rows (K rows of k_row bytes, V rows of v_row) that hold the state.
int64_t delta_net_state_rows(const DeltaNetDims& d, size_t k_row, size_t v_row);
// The state in `rows` such rows at k and v (both float-aligned).
DeltaNetState delta_net_state(const DeltaNetDims& d, uint8_t* k, uint8_t* v, int64_t rows,
                              size_t k_row);

// One sequence's pass of n_tokens tokens from position pos0 (0: a zero state first):
// `mixed` (n_tokens x conv_dim) is convolved and activated in place, `b` and `a` rows
// hold stride floats per token, out is n_tokens x value_dim. conv: conv_dim rows of
// conv_kernel taps; ssm_a and dt_bias n_v_heads values. Heads split over the pool;
// the result does not depend on the split.
void delta_net_forward(ThreadPool& pool, const DeltaNetDims& d, const float* conv,
                       const float* ssm_a, const float* dt_bias, float* mixed, const float* b,
                       const float* a, int64_t ba_stride, const DeltaNetState& state, int64_t pos0,
                       int64_t n_tokens, float* out);

} // namespace pshard
