// Element-wise and small per-token operations of the Llama forward pass, on
// float activations, on the active ISA path (cpu_isa.h): the scalar path is the
// reference, the SIMD paths agree with it to float rounding (a vector exp of ~1 ulp).
#pragma once

#include <cstdint>

namespace pshard {

// y = x / sqrt(mean(x^2) + eps) * weight, over n values (x and y may alias); weight null:
// no factor.
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps);
// LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias over n values, the mean and
// variance summed in double (x and y may alias); bias null: none (ModernBERT). Encoders
// (BERT) and vision towers.
void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n,
                float eps);

// Rotates pairs of each of n_heads heads of head_dim values by angle pos * theta_i
// (the formula, with linear, llama3 and YaRN scaling, is in rope_math.h). `neox`
// false: adjacent pairs (v[2i], v[2i+1]), GGUF llama (q/k rows stored permuted for
// it); true: (v[i], v[i + rot_dim/2]), GPT-NeoX and Qwen. Only the first rot_dim
// values of each head rotate.
//
// Multimodal RoPE (M-RoPE, Qwen2-VL): `sections` splits the pairs among three position
// components — pair i (counted modulo the sections' sum) takes the temporal position in
// its first sections[0] pairs, the height position in the next sections[1], the width
// position in the next sections[2]. Text tokens have all three equal, which is plain
// NeoX RoPE at that position bit for bit (each pair's angle is the same formula of the
// same position); image tokens carry their grid coordinates. Interleaved M-RoPE (Qwen3-VL,
// Qwen3.5) deals the pairs out t, h, w, t, h, w, ... instead (rope_math.h
// rope_pair_section).
enum class RopeScaling : uint8_t { kNone, kLinear, kLlama3, kYarn };
struct RopeParams {
  int64_t head_dim = 0;
  int64_t rot_dim = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;             // 1 / linear (or YaRN) scaling factor
  const float* freq_factors = nullptr; // rot_dim/2 divisors (llama3 rope_freqs), or null
  bool neox = false;
  RopeScaling scaling = RopeScaling::kNone;
  // llama3 without a rope_freqs tensor: the divisors come from these.
  float scaling_factor = 1.0f, low_freq_factor = 1.0f, high_freq_factor = 4.0f;
  int64_t n_ctx_orig = 0;              // llama3 and YaRN: the context trained on
  // YaRN (ext_factor 0: off).
  float ext_factor = 0.0f, attn_factor = 1.0f, beta_fast = 32.0f, beta_slow = 1.0f;
  // M-RoPE: pairs per position component (all zero: one position per token).
  int32_t sections[3] = {0, 0, 0};
  bool interleaved = false;
  // Per pass, host memory: 3 positions (t, h, w) per token of the rows being rotated, or
  // null — then every component is the token's sequence position.
  const int32_t* positions = nullptr;
};
void rope(float* v, int64_t n_heads, int64_t pos, const RopeParams& p);
// One token's rotation with its three M-RoPE position components (p.sections).
void rope_multi(float* v, int64_t n_heads, const int64_t pos[3], const RopeParams& p);

// In-place softmax over n values.
void softmax(float* x, int64_t n);

// out[i] = silu(gate[i]) * up[i]
void silu_mul(const float* gate, const float* up, float* out, int64_t n);

// out[i] = gelu(gate[i]) * up[i], GELU's tanh approximation
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))), computed as g / (1 + e^(-z)) with
// z = g (kGeluC1 + kGeluC3 g^2).
inline constexpr float kGeluC1 = 1.5957691216057308f; // 2 sqrt(2/pi)
inline constexpr float kGeluC3 = kGeluC1 * 0.044715f;
void gelu_mul(const float* gate, const float* up, float* out, int64_t n);
// x[i] = gelu(x[i]), the same tanh approximation (gelu_mul by ones): a vision tower's
// FFN (Qwen3-VL's gelu_pytorch_tanh).
void gelu_tanh(float* x, int64_t n);
// gpt-oss's clamped SwiGLU: g = min(gate[i], kSwigluOaiLimit), u = clamp(up[i], -limit,
// limit), out[i] = g * sigmoid(kSwigluOaiAlpha g) * (u + 1). Cheap next to the expert
// matmuls around it, so one portable loop serves every ISA.
inline constexpr float kSwigluOaiAlpha = 1.702f;
inline constexpr float kSwigluOaiLimit = 7.0f;
void swiglu_oai(const float* gate, const float* up, float* out, int64_t n);
// x[i] = 0.5 x (1 + erf(x / sqrt(2))) in place: GELU's exact form (BERT's FFN, vision
// towers). erf(a) for a >= 0 is Abramowitz and Stegun's 7.1.26, 1 - t (kErfA1 + t (kErfA2 +
// ...)) e^(-a^2) with t = 1 / (1 + kErfP a), within 1.5e-7 of erf: every ISA path computes
// that formula with the exponential SiLU uses (libm's erff, 14 ns a value here, took a
// third of a BERT pass).
inline constexpr float kErfP = 0.3275911f, kErfA1 = 0.254829592f, kErfA2 = -0.284496736f,
                       kErfA3 = 1.421413741f, kErfA4 = -1.453152027f, kErfA5 = 1.061405429f;
inline constexpr float kInvSqrt2 = 0.70710678118654752f;
void gelu_erf(float* x, int64_t n);
// out[i] = gelu(gate[i]) * up[i] with GELU's exact form (gelu_erf): ModernBERT's GeGLU. out
// may alias gate.
void gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n);
// x[i] *= s
void scale_inplace(float* x, float s, int64_t n);
// x[i] = cap * tanh(x[i] / cap)
void softcap_inplace(float* x, float cap, int64_t n);

// y[i] += x[i]
void add_inplace(float* y, const float* x, int64_t n);

} // namespace pshard
