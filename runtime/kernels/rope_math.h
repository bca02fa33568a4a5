// The rotation angle of one RoPE pair, written once for the CPU kernels and the CUDA
// kernels (the functions are host+device under nvcc), so every backend rotates by
// the same formula.
//
// For pair i of a head (rotating dimensions 2i and 2i+1 in kNormal style, i and
// i + rot_dim/2 in NeoX style) at position pos:
//   theta_extrap = pos * freq_base^(-2i / rot_dim) / freq_factor_i
//   none/linear/llama3:  theta = freq_scale * theta_extrap, magnitude 1
//     (llama3's freq_factor_i come from the rope_freqs tensor or, when the file has
//     none, from its scaling keys: llama3_freq_factor below);
//   yarn: theta mixes interpolation and extrapolation per dimension,
//     theta = theta_interp * (1 - r_i) + theta_extrap * r_i, r_i = ramp_i * ext_factor,
//     and cos/sin are scaled by attn_factor * (1 + 0.1 ln(1 / freq_scale))
//     (YaRN, Peng et al. 2023, §3.2–3.4; ramp_i is 1 for dimensions whose wavelength is
//     short compared with the original context, 0 for long ones, linear between the
//     dimensions where beta_fast and beta_slow rotations fit in n_ctx_orig).
//
//   float c, s;
//   rope_pair_cos_sin(p, i, pos, yarn_corr_dims(p), &c, &s);
#pragma once

#include "runtime/kernels/ops.h"

#include <math.h>

#if defined(__CUDACC__)
#define PSHARD_HOST_DEVICE __host__ __device__
#else
#define PSHARD_HOST_DEVICE
#endif

namespace pshard {

struct YarnCorrDims {
  float low = 0.0f, high = 0.0f;
};

// The dimension at which a rotation of n_rot full turns over n_ctx_orig positions lies.
PSHARD_HOST_DEVICE inline float yarn_corr_dim(const RopeParams& p, float n_rot) {
  return static_cast<float>(p.rot_dim) *
         logf(static_cast<float>(p.n_ctx_orig) / (n_rot * 2.0f * 3.14159265358979f)) /
         (2.0f * logf(p.freq_base));
}

PSHARD_HOST_DEVICE inline YarnCorrDims yarn_corr_dims(const RopeParams& p) {
  if (p.ext_factor == 0.0f || p.n_ctx_orig <= 0)
    return {};
  const float lo = floorf(yarn_corr_dim(p, p.beta_fast));
  const float hi = ceilf(yarn_corr_dim(p, p.beta_slow));
  return {lo > 0.0f ? lo : 0.0f, hi < p.rot_dim - 1 ? hi : static_cast<float>(p.rot_dim - 1)};
}

// Llama 3.1's per-pair divisor from its scaling keys: long wavelengths are slowed by
// `factor`, short ones kept, a smooth blend between (the same values the converter
// writes into rope_freqs.weight).
PSHARD_HOST_DEVICE inline float llama3_freq_factor(const RopeParams& p, int64_t i) {
  const float freq = powf(p.freq_base, -2.0f * static_cast<float>(i) / static_cast<float>(p.rot_dim));
  const float wavelen = 2.0f * 3.14159265358979f / freq;
  const float orig = static_cast<float>(p.n_ctx_orig);
  const float low_wavelen = orig / p.low_freq_factor, high_wavelen = orig / p.high_freq_factor;
  if (wavelen < high_wavelen)
    return 1.0f;
  if (wavelen > low_wavelen)
    return p.scaling_factor;
  const float smooth = (orig / wavelen - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
  return 1.0f / ((1.0f - smooth) / p.scaling_factor + smooth);
}

// The powers pair i's angle needs, which do not depend on the position:
// freq_base^(-2i / rot_dim) and, for llama3 scaling without a factor tensor, its divisor
// (1 otherwise, which divides exactly). The CUDA launcher computes them on the host, with
// the CPU's powf, and hands the kernel the table: CUDA's powf may miss glibc's by an ulp
// or more, and the position multiplies the miss (1 ulp of a pair's frequency is ~5e-5 rad
// at position 1000), so both backends now rotate by the same angle bit for bit.
struct RopePairPowers {
  float base_power = 1.0f;
  float llama3_divisor = 1.0f;
};

PSHARD_HOST_DEVICE inline RopePairPowers rope_pair_powers(const RopeParams& p, int64_t i) {
  RopePairPowers w;
  w.base_power = powf(p.freq_base, -2.0f * static_cast<float>(i) / static_cast<float>(p.rot_dim));
  if (p.freq_factors == nullptr && p.scaling == RopeScaling::kLlama3)
    w.llama3_divisor = llama3_freq_factor(p, i);
  return w;
}

// a * b + c * d with each product rounded, as the CPU computes it (its kernels build
// with -ffp-contract=off): nvcc would fuse it into a multiply-add, and a YaRN angle one
// ulp apart grows with the position like a frequency one ulp apart.
PSHARD_HOST_DEVICE inline float sum_of_products(float a, float b, float c, float d) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(a, b), __fmul_rn(c, d));
#else
  return a * b + c * d;
#endif
}

PSHARD_HOST_DEVICE inline void rope_pair_cos_sin(const RopeParams& p, int64_t i, int64_t pos,
                                                 YarnCorrDims corr, RopePairPowers w, float* c,
                                                 float* s) {
  float theta_extrap = static_cast<float>(pos) * w.base_power;
  if (p.freq_factors != nullptr)
    theta_extrap /= p.freq_factors[i];
  else if (p.scaling == RopeScaling::kLlama3)
    theta_extrap /= w.llama3_divisor;
  float theta = p.freq_scale * theta_extrap;
  float mscale = p.attn_factor;
  if (p.ext_factor != 0.0f) {
    const float y = (static_cast<float>(i) - corr.low) /
                    (corr.high - corr.low > 0.001f ? corr.high - corr.low : 0.001f);
    const float ramp = 1.0f - (y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y);
    const float mix = ramp * p.ext_factor;
    theta = sum_of_products(theta, 1.0f - mix, theta_extrap, mix);
    mscale *= 1.0f + 0.1f * logf(1.0f / p.freq_scale);
  }
  *c = cosf(theta) * mscale;
  *s = sinf(theta) * mscale;
}

PSHARD_HOST_DEVICE inline void rope_pair_cos_sin(const RopeParams& p, int64_t i, int64_t pos,
                                                 YarnCorrDims corr, float* c, float* s) {
  rope_pair_cos_sin(p, i, pos, corr, rope_pair_powers(p, i), c, s);
}

// Which M-RoPE position component (0 temporal, 1 height, 2 width) pair i rotates by;
// 0 for a model without sections.
PSHARD_HOST_DEVICE inline int rope_pair_section(const RopeParams& p, int64_t i) {
  const int64_t s0 = p.sections[0], s1 = p.sections[1], s2 = p.sections[2];
  if (s0 + s1 + s2 <= 0)
    return 0;
  const int64_t sector = i % (s0 + s1 + s2);
  if (p.interleaved) // HF's apply_interleaved_mrope: the rest keep the temporal position
    return sector % 3 == 1 && sector < 3 * s1 ? 1 : sector % 3 == 2 && sector < 3 * s2 ? 2 : 0;
  return sector < s0 ? 0 : sector < s0 + s1 ? 1 : 2;
}

// The two values pair i rotates, as offsets into a head.
PSHARD_HOST_DEVICE inline void rope_pair_offsets(const RopeParams& p, int64_t i, int64_t* a,
                                                 int64_t* b) {
  if (p.neox) {
    *a = i;
    *b = i + p.rot_dim / 2;
  } else {
    *a = 2 * i;
    *b = 2 * i + 1;
  }
}

} // namespace pshard
