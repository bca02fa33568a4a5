// One transformer block of the vision tower: the attention sub-layer (2D rotary
// positions, full or windowed attention) and the FFN sub-layer.
#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/rope_math.h"
#include "runtime/vision/vision_encoder.h"
#include "runtime/vision/vision_math.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

// Rotates every head of token rows x (n x C) by its patch's (row, column): pair j of the
// first half of pairs by the row, of the second half by the column, each half with its
// own frequencies 10000^(-2k / (head_dim / 2)), k counted from the half's start.
void rotate_2d(VisionPass& p, float* x) {
  const int64_t hd = p.hp.head_dim(), n_head = p.hp.n_head, quarter = hd / 4;
  RopeParams half; // the angle formula of the language model's RoPE, over head_dim/2
  half.head_dim = hd;
  half.rot_dim = hd / 2;
  half.freq_base = 10000.0f;
  const YarnCorrDims none{};
  p.pool.parallel_for(p.n_tokens(), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      for (int64_t j = 0; j < hd / 2; ++j) {
        const int64_t pos =
            j < quarter ? p.pos_y[static_cast<size_t>(t)] : p.pos_x[static_cast<size_t>(t)];
        float c, s;
        rope_pair_cos_sin(half, j % quarter, pos, none, &c, &s);
        for (int64_t h = 0; h < n_head; ++h) {
          float* head = x + (t * n_head + h) * hd;
          const float x0 = head[j], x1 = head[j + hd / 2];
          head[j] = x0 * c - x1 * s;
          head[j + hd / 2] = x0 * s + x1 * c;
        }
      }
  });
}

// Each query attends to the keys of its run [begin, end): the whole image, or its window.
void attend(VisionPass& p, bool full) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd, hd = p.hp.head_dim();
  std::vector<int64_t> run_of(static_cast<size_t>(n));
  for (size_t r = 0; r < p.windows.size(); r += 2)
    for (int64_t t = p.windows[r]; t < p.windows[r + 1]; ++t)
      run_of[static_cast<size_t>(t)] = static_cast<int64_t>(r);
  const size_t row_bytes = static_cast<size_t>(c) * sizeof(float);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  p.pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(n));
    for (int64_t t = begin; t < end; ++t) {
      const size_t r = static_cast<size_t>(run_of[static_cast<size_t>(t)]);
      const int64_t k0 = full ? 0 : p.windows[r], k1 = full ? n : p.windows[r + 1];
      for (int64_t h = 0; h < p.hp.n_head; ++h) {
        AttendHead a;
        a.q = p.q.data() + t * c + h * hd;
        a.k = reinterpret_cast<const uint8_t*>(p.k.data() + k0 * c + h * hd);
        a.v = reinterpret_cast<const uint8_t*>(p.v.data() + k0 * c + h * hd);
        a.k_row_bytes = a.v_row_bytes = row_bytes;
        a.n_kv = k1 - k0;
        a.head_dim = hd;
        a.scale = scale;
        a.out = p.attn.data() + t * c + h * hd;
        a.scores = scores.data();
        attend_head(a);
      }
    }
  });
}

void add_rows(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += x[i];
}

} // namespace

void vision_attention_forward(VisionPass& p, const VisionAttentionWeights& w, int64_t block) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd;
  vision_norm(p.hp, w.norm, p.hidden.data(), p.normed.data(), n, c);
  vision_linear(w.q, p.normed.data(), n, p.q.data(), p.pool);
  vision_linear(w.k, p.normed.data(), n, p.k.data(), p.pool);
  vision_linear(w.v, p.normed.data(), n, p.v.data(), p.pool);
  rotate_2d(p, p.q.data());
  rotate_2d(p, p.k.data());
  attend(p, p.hp.full_attention(block));
  vision_linear(w.out, p.attn.data(), n, p.normed.data(), p.pool);
  add_rows(p.hidden.data(), p.normed.data(), n * c);
}

void vision_ffn_forward(VisionPass& p, const VisionFfnWeights& w) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd, f = p.hp.n_ff;
  vision_norm(p.hp, w.norm, p.hidden.data(), p.normed.data(), n, c);
  vision_linear(w.up, p.normed.data(), n, p.ff_a.data(), p.pool);
  if (w.gate.w.data) {
    vision_linear(w.gate, p.normed.data(), n, p.ff_b.data(), p.pool);
    vision_activation(p.hp.act, p.ff_b.data(), n * f);
    for (int64_t i = 0; i < n * f; ++i)
      p.ff_a[static_cast<size_t>(i)] *= p.ff_b[static_cast<size_t>(i)];
  } else {
    vision_activation(p.hp.act, p.ff_a.data(), n * f);
  }
  vision_linear(w.down, p.ff_a.data(), n, p.normed.data(), p.pool);
  add_rows(p.hidden.data(), p.normed.data(), n * c);
}

} // namespace pshard
