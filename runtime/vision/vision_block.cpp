// One transformer block of the vision tower: the attention sub-layer (2D rotary
// positions, full or windowed tiled attention) and the FFN sub-layer.
#include "runtime/kernels/rope_math.h"
#include "runtime/vision/tiled_attention.h"
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

void add_rows(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += x[i];
}

} // namespace

void vision_attention_forward(VisionPass& p, const VisionAttentionWeights& w, int64_t block) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd;
  const VisionBuffers& b = p.buf;
  vision_norm(p.hp, w.norm, b.hidden, b.normed, n, c);
  vision_linear(w.q, b.normed, n, b.q, p.pool);
  vision_linear(w.k, b.normed, n, b.k, p.pool);
  vision_linear(w.v, b.normed, n, b.v, p.pool);
  rotate_2d(p, b.q);
  rotate_2d(p, b.k);
  TiledAttention a;
  a.q = b.q;
  a.k = b.k;
  a.v = b.v;
  a.out = b.attn;
  a.n_head = p.hp.n_head;
  a.head_dim = p.hp.head_dim();
  a.tile = b.tile;
  a.runs = p.hp.full_attention(block) ? p.whole : p.windows;
  tiled_attention(a, b.scratch, b.scratch_workers, p.pool);
  vision_linear(w.out, b.attn, n, b.normed, p.pool);
  add_rows(b.hidden, b.normed, n * c);
}

void vision_ffn_forward(VisionPass& p, const VisionFfnWeights& w) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd, f = p.hp.n_ff;
  const VisionBuffers& b = p.buf;
  vision_norm(p.hp, w.norm, b.hidden, b.normed, n, c);
  vision_linear(w.up, b.normed, n, b.ff_a, p.pool);
  if (w.gate.w.data) {
    vision_linear(w.gate, b.normed, n, b.ff_b, p.pool);
    vision_gated_activation(p.hp.act, b.ff_b, b.ff_a, n * f);
  } else {
    vision_activation(p.hp.act, b.ff_a, n * f);
  }
  vision_linear(w.down, b.ff_a, n, b.normed, p.pool);
  add_rows(b.hidden, b.normed, n * c);
  if (w.deepstack.fc1.w.data) // taken after the residual, before any norm
    vision_deepstack_forward(p, w.deepstack);
}

} // namespace pshard
