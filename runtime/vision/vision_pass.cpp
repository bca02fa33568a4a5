// The token order of a pass (2x2 blocks, grouped by window when the tower has window
// attention), the patch embedding and the merger; the blocks are in vision_block.cpp.
#include "runtime/vision/vision_encoder.h"
#include "runtime/vision/vision_math.h"

#include <algorithm>

namespace pshard {

VisionPass::VisionPass(const ProjectorHParams& h, ThreadPool& p, const VisionInput& in)
    : hp(h), pool(p), input(in), patches_x(in.width / h.patch_size),
      patches_y(in.height / h.patch_size) {
  const int64_t bx = patches_x / 2, by = patches_y / 2;
  // Windows of `g` x `g` blocks in raster order, raster order inside; one window covering
  // the image when every block attends fully.
  const int64_t g = hp.n_wa_pattern > 0 ? hp.window_tokens() : std::max(bx, by);
  for (int64_t wy = 0; wy < by; wy += g)
    for (int64_t wx = 0; wx < bx; wx += g) {
      windows.push_back(static_cast<int64_t>(block_order.size()) * 4);
      for (int64_t y = wy; y < std::min(wy + g, by); ++y)
        for (int64_t x = wx; x < std::min(wx + g, bx); ++x)
          block_order.push_back(static_cast<int32_t>(y * bx + x));
      windows.push_back(static_cast<int64_t>(block_order.size()) * 4);
    }
  for (int32_t b : block_order)
    for (int q = 0; q < 4; ++q) {
      pos_y.push_back(static_cast<int32_t>((b / bx) * 2 + q / 2));
      pos_x.push_back(static_cast<int32_t>((b % bx) * 2 + q % 2));
    }
  const size_t nc = static_cast<size_t>(n_tokens() * hp.n_embd);
  for (std::vector<float>* buf : {&hidden, &normed, &q, &k, &v, &attn})
    buf->resize(nc);
  // The widest per-token scratch: FFN activations, a patch's pixels, the merger's rows.
  const int64_t widest =
      std::max({hp.n_ff, 4 * hp.n_embd, 3 * hp.patch_size * hp.patch_size, hp.projection_dim});
  ff_a.resize(static_cast<size_t>(n_tokens() * widest));
  ff_b.resize(ff_a.size());
}

void vision_patch_forward(VisionPass& p, const ProjectorWeights& w) {
  const int64_t ps = p.hp.patch_size, n = p.n_tokens(), cols = 3 * ps * ps;
  const int64_t width = p.input.width, plane = p.input.width * p.input.height;
  // Each patch's pixels as one row: channel, then row, then column (the kernel's order).
  std::vector<float>& rows = p.ff_a;
  for (int64_t t = 0; t < n; ++t) {
    float* row = rows.data() + t * cols;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t ky = 0; ky < ps; ++ky) {
        const float* src =
            p.input.chw.data() + c * plane + (p.pos_y[t] * ps + ky) * width + p.pos_x[t] * ps;
        std::copy(src, src + ps, row + (c * ps + ky) * ps);
      }
  }
  matmul(w.patch, rows.data(), n, p.hidden.data(), p.pool);
}

void vision_merger_forward(VisionPass& p, const VisionMergerWeights& w) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd, blocks = n / 4;
  vision_norm(p.hp, w.norm, p.hidden.data(), p.normed.data(), n, c);
  // The four patches of a block are consecutive rows: `normed` read as blocks x 4C.
  vision_linear(w.fc0, p.normed.data(), blocks, p.ff_a.data(), p.pool);
  gelu_erf(p.ff_a.data(), blocks * w.fc0.w.rows);
  vision_linear(w.fc2, p.ff_a.data(), blocks, p.ff_b.data(), p.pool);
  const int64_t dim = w.fc2.w.rows;
  p.out.tokens_x = p.patches_x / 2;
  p.out.tokens_y = p.patches_y / 2;
  p.out.n_embd = dim;
  p.out.data.assign(static_cast<size_t>(blocks * dim), 0.0f);
  for (int64_t m = 0; m < blocks; ++m)
    std::copy(p.ff_b.begin() + m * dim, p.ff_b.begin() + (m + 1) * dim,
              p.out.data.begin() + p.block_order[static_cast<size_t>(m)] * dim);
}

void run_vision_sublayer(const VisionSubLayer& s, VisionPass& p, const ProjectorWeights& w) {
  switch (s.kind) {
  case VisionSubLayerKind::kPatchEmbed:
    vision_patch_forward(p, w);
    return;
  case VisionSubLayerKind::kAttention:
    vision_attention_forward(p, w.attn[static_cast<size_t>(s.block)], s.block);
    return;
  case VisionSubLayerKind::kFfn:
    vision_ffn_forward(p, w.ffn[static_cast<size_t>(s.block)]);
    return;
  case VisionSubLayerKind::kMerger:
    vision_merger_forward(p, w.merger);
    return;
  }
}

Result<ImageEmbeddings> encode_image(const Projector& proj, const VisionInput& in,
                                     ThreadPool& pool) {
  const ProjectorHParams& hp = proj.hparams();
  const int64_t m = hp.merged_patch();
  if (in.width <= 0 || in.height <= 0 || in.width % m != 0 || in.height % m != 0 ||
      in.chw.size() != static_cast<size_t>(3 * in.width * in.height))
    return invalid_argument("the vision input is " + std::to_string(in.width) + " x " +
                            std::to_string(in.height) + " pixels; it must be a whole grid of " +
                            std::to_string(m) + "-pixel image tokens (use preprocess_image)");
  VisionPass pass(hp, pool, in);
  for (const VisionSubLayer& s : vision_sublayers(hp))
    run_vision_sublayer(s, pass, proj.weights());
  return std::move(pass.out);
}

} // namespace pshard
