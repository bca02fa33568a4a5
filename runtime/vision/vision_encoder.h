// The Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision tower on the CPU, as a sequence of sub-layers
// (projector_layout.h) over one image's activations, so a plan can later place each one
// as it places the language model's:
//
//   v.patch     patches of p x p pixels -> C values (the summed 3D kernel; qwen3vl_merger:
//               plus its bias and the position table resized to the patch grid —
//               bilinear on corner-aligned sample points, as HF's Qwen3-VL does);
//               token order: 2x2 blocks of patches (the image tokens-to-be) in raster
//               order, the four patches of a block in raster order inside it — or, with
//               window attention, blocks grouped window by window (windows of
//               window_size pixels, raster order) so each window is one contiguous run
//   v.attn[i]   norm, q/k/v (+bias), 2D rotary positions — a head's first half of pairs
//               rotates by the patch's row, the second by its column, frequencies
//               10000^(-4k/head_dim) restarting in each half, pairs (j, j + head_dim/2) —
//               softmax(q k^T / sqrt(head_dim)) v over all patches (full attention) or
//               over the patch's window, output projection (+bias), residual
//   v.ffn[i]    norm, act(gate) * up or act(up), down, biases everywhere, residual; a
//               DeepStack block then runs its merger over the new hidden state (LayerNorm
//               of the four patches of an image token together, fc1, GELU (erf), fc2)
//   v.merger    norm, four patches of a block concatenated (4C), mm.0 + bias, GELU
//               (erf), mm.2 + bias -> P values per image token, back in raster order
//
// Attention is tiled (tiled_attention.h): its scratch is O(tile), never a patches² matrix.
// The activations are float buffers a pass points at (VisionBuffers): its own host
// storage, or — for the sub-layers a vision plan puts on a device — buffers in the
// device's arena (runtime/executor/vision_phase.h moves the hidden state between them).
//
//   PSHARD_ASSIGN_OR_RETURN(ImageEmbeddings e, encode_image(*proj, input, pool));
//   e.tokens_x * e.tokens_y;   // image tokens, e.data row t = token t (row-major grid)
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"
#include "runtime/vision/image.h"
#include "runtime/vision/projector.h"
#include "runtime/vision/projector_layout.h"

#include <cstdint>
#include <vector>

namespace pshard {

struct ImageEmbeddings {
  int64_t tokens_x = 0, tokens_y = 0; // the grid of image tokens (merged patches)
  int64_t n_embd = 0;                 // the projector's projection_dim
  std::vector<float> data;            // tokens_y * tokens_x rows of n_embd, raster order
  // DeepStack (qwen3vl_merger): per DeepStack merger, n_tokens() rows of n_embd in raster
  // order, one merger after another — what a Qwen3-VL language model adds to the image's
  // positions after its layers 0, 1, ... (empty without DeepStack).
  int64_t n_deepstack = 0;
  std::vector<float> deepstack;
  int64_t n_tokens() const { return tokens_x * tokens_y; }
  const float* deepstack_row(int64_t k, int64_t token) const {
    return deepstack.data() + (k * n_tokens() + token) * n_embd;
  }
};

// The activation buffers of one image's pass: token rows of C floats (hidden, normed,
// q, k, v, attn) and two wide scratch buffers (FFN, patch pixels, merger rows), plus
// the tiled attention's scratch slots.
struct VisionBuffers {
  float *hidden = nullptr, *normed = nullptr, *q = nullptr, *k = nullptr, *v = nullptr,
        *attn = nullptr, *ff_a = nullptr, *ff_b = nullptr;
  float* scratch = nullptr;
  int64_t scratch_workers = 0;
  int64_t tile = 0; // queries per attention tile
};

// Floats of activations a pass over n_tokens patches needs (VisionBuffers without the
// scratch), and the buffers carved from `base` (that many floats).
int64_t vision_activation_floats(const ProjectorWeights& w, const ProjectorHParams& hp,
                                 int64_t n_tokens);
VisionBuffers carve_vision_buffers(float* base, const ProjectorWeights& w,
                                   const ProjectorHParams& hp, int64_t n_tokens);
// The attention tile a pass without a plan uses (the result does not depend on it).
inline constexpr int64_t kDefaultVisionTile = 256;

// The activations of one image through the tower.
struct VisionPass {
  const ProjectorHParams& hp;
  ThreadPool& pool;
  const VisionInput& input;
  int64_t patches_x = 0, patches_y = 0;
  std::vector<int32_t> block_order;  // processing position -> raster index of a 2x2 block
  std::vector<int32_t> pos_y, pos_x; // per patch token, in processing order
  // Runs of tokens that attend to each other in a windowed block ([begin, end) pairs).
  std::vector<int64_t> windows;
  std::vector<int64_t> whole; // one run over every token (full attention)
  // Per DeepStack merger: merged_rows() x projection_dim, processing order (host memory).
  std::vector<std::vector<float>> deepstack;
  VisionBuffers host;         // over host_storage
  VisionBuffers buf;          // the buffers sub-layers run on: `host` unless moved
  ImageEmbeddings out;

  // `tile`: queries per attention tile of the host buffers' scratch.
  VisionPass(const ProjectorHParams& h, const ProjectorWeights& w, ThreadPool& p,
             const VisionInput& in, int64_t tile = kDefaultVisionTile);
  int64_t n_tokens() const { return patches_x * patches_y; }
  int64_t merged_rows() const { return n_tokens() / 4; }

private:
  std::vector<float> host_storage_;
};

// The patch pixels of every token as rows of 3·p·p (channel, row, column) into `rows`
// (host memory), the patch embedding's input.
void vision_patch_rows(const VisionPass& pass, float* rows);
// hidden = rows W^T over buf.ff_a (which vision_patch_rows filled).
void vision_patch_embed(VisionPass& pass, const ProjectorWeights& w);
// Copies the merger's output (`rows`: merged_rows() x projection_dim, host memory, in
// processing order) into pass.out in raster order.
void vision_gather_output(VisionPass& pass, const float* rows, int64_t dim);
// Keeps DeepStack merger k's rows (merged_rows() x dim, host memory, processing order).
void vision_keep_deepstack(VisionPass& pass, int64_t k, const float* rows, int64_t dim);
void vision_patch_forward(VisionPass& pass, const ProjectorWeights& w); // rows, then embed
void vision_attention_forward(VisionPass& pass, const VisionAttentionWeights& w, int64_t block);
// The FFN; a DeepStack block's merger rows then in buf.ff_b (merged_rows() x P).
void vision_ffn_forward(VisionPass& pass, const VisionFfnWeights& w);
// A DeepStack merger over buf.hidden, into buf.ff_b (vision_ffn_forward runs it).
void vision_deepstack_forward(VisionPass& pass, const VisionDeepstackWeights& w);
// The merger's rows into buf.ff_b (merged_rows() x projection_dim, processing order);
// vision_gather_output places them.
void vision_merger_forward(VisionPass& pass, const VisionMergerWeights& w);
// One sub-layer on pass.buf (the merger also fills pass.out, and a DeepStack FFN keeps its
// rows, when buf is the host's).
void run_vision_sublayer(const VisionSubLayer& s, VisionPass& pass, const ProjectorWeights& w);

// kInvalidArgument unless `in` is a whole grid of image tokens for this projector.
Status check_vision_input(const ProjectorHParams& hp, const VisionInput& in);
// Every sub-layer in order, on the host. The input must be preprocess_image's for this
// projector.
Result<ImageEmbeddings> encode_image(const Projector& projector, const VisionInput& input,
                                     ThreadPool& pool);

} // namespace pshard
