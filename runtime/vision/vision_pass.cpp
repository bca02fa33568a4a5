// The token order of a pass (2x2 blocks, grouped by window when the tower has window
// attention), the patch embedding and the merger; the blocks are in vision_block.cpp.
#include "runtime/vision/tiled_attention.h"
#include "runtime/vision/vision_encoder.h"
#include "runtime/vision/vision_math.h"

#include <algorithm>

namespace pshard {

namespace {

// Per-token widths of the two wide buffers: ff_a holds the FFN's up (and activated)
// rows, a patch's pixels and the merger's first layer (4C per block of four tokens);
// ff_b the FFN's gate rows and the merger's output (P per block).
struct WideWidths {
  int64_t a = 0, b = 0;
};

WideWidths wide_widths(const ProjectorWeights& w, const ProjectorHParams& hp) {
  const bool gated = !w.ffn.empty() && w.ffn.front().gate.w.data;
  const int64_t merger_a = (w.merger.fc0.w.rows + 3) / 4, merger_b = (w.merger.fc2.w.rows + 3) / 4;
  return {std::max({hp.n_ff, 3 * hp.patch_size * hp.patch_size, merger_a}),
          std::max(gated ? hp.n_ff : int64_t{0}, merger_b)};
}

} // namespace

int64_t vision_activation_floats(const ProjectorWeights& w, const ProjectorHParams& hp,
                                 int64_t n_tokens) {
  const WideWidths wide = wide_widths(w, hp);
  return n_tokens * (6 * hp.n_embd + wide.a + wide.b);
}

VisionBuffers carve_vision_buffers(float* base, const ProjectorWeights& w,
                                   const ProjectorHParams& hp, int64_t n_tokens) {
  const int64_t nc = n_tokens * hp.n_embd;
  const WideWidths wide = wide_widths(w, hp);
  VisionBuffers b;
  float** rows[] = {&b.hidden, &b.normed, &b.q, &b.k, &b.v, &b.attn};
  for (float** r : rows) {
    *r = base;
    base += nc;
  }
  b.ff_a = base;
  b.ff_b = base + n_tokens * wide.a;
  return b;
}

VisionPass::VisionPass(const ProjectorHParams& h, const ProjectorWeights& w, ThreadPool& p,
                       const VisionInput& in, int64_t tile)
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
  whole = {0, n_tokens()};
  for (int32_t b : block_order)
    for (int q = 0; q < 4; ++q) {
      pos_y.push_back(static_cast<int32_t>((b / bx) * 2 + q / 2));
      pos_x.push_back(static_cast<int32_t>((b % bx) * 2 + q % 2));
    }
  const int64_t act = vision_activation_floats(w, hp, n_tokens());
  const int64_t workers = pool.size();
  host_storage_.resize(static_cast<size_t>(
      act + tiled_attention_scratch_floats(tile, hp.head_dim(), n_tokens()) * workers));
  deepstack.resize(hp.deepstack.size());
  host = carve_vision_buffers(host_storage_.data(), w, hp, n_tokens());
  host.scratch = host_storage_.data() + act;
  host.scratch_workers = workers;
  host.tile = tile;
  buf = host;
}

void vision_patch_rows(const VisionPass& p, float* rows) {
  const int64_t ps = p.hp.patch_size, n = p.n_tokens(), cols = 3 * ps * ps;
  const int64_t width = p.input.width, plane = p.input.width * p.input.height;
  // Each patch's pixels as one row: channel, then row, then column (the kernel's order).
  for (int64_t t = 0; t < n; ++t) {
    float* row = rows + t * cols;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t ky = 0; ky < ps; ++ky) {
        const float* src =
            p.input.chw.data() + c * plane + (p.pos_y[t] * ps + ky) * width + p.pos_x[t] * ps;
        std::copy(src, src + ps, row + (c * ps + ky) * ps);
      }
  }
}

namespace {

// Sample points of the position table for `n` patches along a side: `side` entries
// spread over them corner to corner (HF's torch.linspace(0, side - 1, n)).
float table_point(int64_t i, int64_t n, int64_t side) {
  if (n <= 1)
    return 0.0f;
  return static_cast<float>(i) * static_cast<float>(side - 1) / static_cast<float>(n - 1);
}

// hidden += the position table bilinearly resized to the patch grid, and the patch bias.
void add_positions(VisionPass& p, const ProjectorWeights& w) {
  const int64_t c = p.hp.n_embd, side = p.hp.pos_side;
  const float* table = w.positions.data;
  const float* bias = w.patch_bias.data;
  p.pool.parallel_for(p.n_tokens(), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float fy = table_point(p.pos_y[static_cast<size_t>(t)], p.patches_y, side);
      const float fx = table_point(p.pos_x[static_cast<size_t>(t)], p.patches_x, side);
      const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
      const int64_t y1 = std::min(y0 + 1, side - 1), x1 = std::min(x0 + 1, side - 1);
      const float dy = fy - static_cast<float>(y0), dx = fx - static_cast<float>(x0);
      const float* r00 = table + (y0 * side + x0) * c;
      const float* r01 = table + (y0 * side + x1) * c;
      const float* r10 = table + (y1 * side + x0) * c;
      const float* r11 = table + (y1 * side + x1) * c;
      const float w00 = (1 - dy) * (1 - dx), w01 = (1 - dy) * dx, w10 = dy * (1 - dx),
                  w11 = dy * dx;
      float* h = p.buf.hidden + t * c;
      for (int64_t i = 0; i < c; ++i)
        h[i] += bias[i] + (w00 * r00[i] + w01 * r01[i] + w10 * r10[i] + w11 * r11[i]);
    }
  });
}

} // namespace

void vision_patch_embed(VisionPass& p, const ProjectorWeights& w) {
  matmul(w.patch, p.buf.ff_a, p.n_tokens(), p.buf.hidden, p.pool);
  if (w.positions.data)
    add_positions(p, w);
}

void vision_patch_forward(VisionPass& p, const ProjectorWeights& w) {
  vision_patch_rows(p, p.buf.ff_a);
  vision_patch_embed(p, w);
}

namespace {

// fc2(GELU(fc1(x))) over the image tokens' rows of 4C in buf.normed, into buf.ff_b.
void merge_rows(VisionPass& p, const VisionLinear& fc1, const VisionLinear& fc2) {
  const int64_t blocks = p.merged_rows();
  vision_linear(fc1, p.buf.normed, blocks, p.buf.ff_a, p.pool);
  gelu_erf(p.buf.ff_a, blocks * fc1.w.rows);
  vision_linear(fc2, p.buf.ff_a, blocks, p.buf.ff_b, p.pool);
}

} // namespace

void vision_merger_forward(VisionPass& p, const VisionMergerWeights& w) {
  const int64_t n = p.n_tokens(), c = p.hp.n_embd;
  vision_norm(p.hp, w.norm, p.buf.hidden, p.buf.normed, n, c);
  // The four patches of a block are consecutive rows: `normed` read as blocks x 4C.
  merge_rows(p, w.fc0, w.fc2);
}

void vision_deepstack_forward(VisionPass& p, const VisionDeepstackWeights& w) {
  // The norm spans the four patches of an image token at once (after the shuffle).
  vision_norm(p.hp, w.norm, p.buf.hidden, p.buf.normed, p.merged_rows(), 4 * p.hp.n_embd);
  merge_rows(p, w.fc1, w.fc2);
}

void vision_keep_deepstack(VisionPass& p, int64_t k, const float* rows, int64_t dim) {
  p.deepstack[static_cast<size_t>(k)].assign(rows, rows + p.merged_rows() * dim);
}

void vision_gather_output(VisionPass& p, const float* rows, int64_t dim) {
  const int64_t blocks = p.merged_rows();
  p.out.tokens_x = p.patches_x / 2;
  p.out.tokens_y = p.patches_y / 2;
  p.out.n_embd = dim;
  p.out.data.assign(static_cast<size_t>(blocks * dim), 0.0f);
  for (int64_t m = 0; m < blocks; ++m)
    std::copy(rows + m * dim, rows + (m + 1) * dim,
              p.out.data.begin() + p.block_order[static_cast<size_t>(m)] * dim);
  p.out.n_deepstack = static_cast<int64_t>(p.deepstack.size());
  p.out.deepstack.assign(static_cast<size_t>(p.out.n_deepstack * blocks * dim), 0.0f);
  for (int64_t k = 0; k < p.out.n_deepstack; ++k) {
    const std::vector<float>& src = p.deepstack[static_cast<size_t>(k)];
    for (int64_t m = 0; m < blocks && !src.empty(); ++m)
      std::copy(src.begin() + m * dim, src.begin() + (m + 1) * dim,
                p.out.deepstack.begin() +
                    (k * blocks + p.block_order[static_cast<size_t>(m)]) * dim);
  }
}

void run_vision_sublayer(const VisionSubLayer& s, VisionPass& p, const ProjectorWeights& w) {
  switch (s.kind) {
  case VisionSubLayerKind::kPatchEmbed:
    vision_patch_forward(p, w);
    return;
  case VisionSubLayerKind::kAttention:
    vision_attention_forward(p, w.attn[static_cast<size_t>(s.block)], s.block);
    return;
  case VisionSubLayerKind::kFfn: {
    const VisionFfnWeights& f = w.ffn[static_cast<size_t>(s.block)];
    vision_ffn_forward(p, f);
    if (f.deepstack.fc1.w.data && p.buf.ff_b == p.host.ff_b)
      vision_keep_deepstack(p, p.hp.deepstack_index(s.block), p.host.ff_b, f.deepstack.fc2.w.rows);
    return;
  }
  case VisionSubLayerKind::kMerger:
    vision_merger_forward(p, w.merger);
    if (p.buf.ff_b == p.host.ff_b)
      vision_gather_output(p, p.host.ff_b, w.merger.fc2.w.rows);
    return;
  }
}

Status check_vision_input(const ProjectorHParams& hp, const VisionInput& in) {
  const int64_t m = hp.merged_patch();
  if (in.width <= 0 || in.height <= 0 || in.width % m != 0 || in.height % m != 0 ||
      in.chw.size() != static_cast<size_t>(3 * in.width * in.height))
    return invalid_argument("the vision input is " + std::to_string(in.width) + " x " +
                            std::to_string(in.height) + " pixels; it must be a whole grid of " +
                            std::to_string(m) + "-pixel image tokens (use preprocess_image)");
  return Status::ok_status();
}

Result<ImageEmbeddings> encode_image(const Projector& proj, const VisionInput& in,
                                     ThreadPool& pool) {
  const ProjectorHParams& hp = proj.hparams();
  PSHARD_RETURN_IF_ERROR(check_vision_input(hp, in));
  VisionPass pass(hp, proj.weights(), pool, in);
  for (const VisionSubLayer& s : vision_sublayers(hp))
    run_vision_sublayer(s, pass, proj.weights());
  return std::move(pass.out);
}

} // namespace pshard
