// Element-wise and small per-token operations of the Llama forward pass, on
// float activations, on the active ISA path (cpu_isa.h): the scalar path is the
// reference, the SIMD paths agree with it to float rounding (a vector exp of ~1 ulp).
#pragma once

#include <cstdint>

namespace pshard {

// y = x / sqrt(mean(x^2) + eps) * weight, over n values (x and y may alias).
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps);

// Rotates adjacent pairs (v[2i], v[2i+1]) of each of n_heads heads of head_dim
// values by angle pos * theta_i, theta_i = freq_scale * base^(-2i/rot_dim) /
// freq_factor_i ("normal" RoPE as used by GGUF llama models; Q and K rows are
// stored permuted for it). Only the first rot_dim values of each head rotate.
struct RopeParams {
  int64_t head_dim = 0;
  int64_t rot_dim = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;            // 1 / linear scaling factor
  const float* freq_factors = nullptr; // rot_dim/2 divisors (llama3 rope_freqs), or null
};
void rope(float* v, int64_t n_heads, int64_t pos, const RopeParams& p);

// In-place softmax over n values.
void softmax(float* x, int64_t n);

// out[i] = silu(gate[i]) * up[i]
void silu_mul(const float* gate, const float* up, float* out, int64_t n);

// y[i] += x[i]
void add_inplace(float* y, const float* x, int64_t n);

} // namespace pshard
