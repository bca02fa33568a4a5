// The Qwen2-VL / Qwen2.5-VL vision tower on the CPU, as a sequence of sub-layers
// (projector_layout.h) over one image's activations, so a plan can later place each one
// as it places the language model's:
//
//   v.patch     patches of p x p pixels -> C values (the summed 3D kernel, no bias);
//               token order: 2x2 blocks of patches (the image tokens-to-be) in raster
//               order, the four patches of a block in raster order inside it — or, with
//               window attention, blocks grouped window by window (windows of
//               window_size pixels, raster order) so each window is one contiguous run
//   v.attn[i]   norm, q/k/v (+bias), 2D rotary positions — a head's first half of pairs
//               rotates by the patch's row, the second by its column, frequencies
//               10000^(-4k/head_dim) restarting in each half, pairs (j, j + head_dim/2) —
//               softmax(q k^T / sqrt(head_dim)) v over all patches (full attention) or
//               over the patch's window, output projection (+bias), residual
//   v.ffn[i]    norm, act(gate) * up or act(up), down, biases everywhere, residual
//   v.merger    norm, four patches of a block concatenated (4C), mm.0 + bias, GELU
//               (erf), mm.2 + bias -> P values per image token, back in raster order
//
// Attention is computed per query with O(patches) scratch (never a patches² matrix).
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
  int64_t n_tokens() const { return tokens_x * tokens_y; }
};

// The activations of one image through the tower (host memory).
struct VisionPass {
  const ProjectorHParams& hp;
  ThreadPool& pool;
  const VisionInput& input;
  int64_t patches_x = 0, patches_y = 0;
  std::vector<int32_t> block_order;  // processing position -> raster index of a 2x2 block
  std::vector<int32_t> pos_y, pos_x; // per patch token, in processing order
  // Runs of tokens that attend to each other in a windowed block ([begin, end) pairs).
  std::vector<int64_t> windows;
  std::vector<float> hidden, normed, q, k, v, attn, ff_a, ff_b;
  ImageEmbeddings out;

  VisionPass(const ProjectorHParams& h, ThreadPool& p, const VisionInput& in);
  int64_t n_tokens() const { return patches_x * patches_y; }
};

void vision_patch_forward(VisionPass& pass, const ProjectorWeights& w);
void vision_attention_forward(VisionPass& pass, const VisionAttentionWeights& w, int64_t block);
void vision_ffn_forward(VisionPass& pass, const VisionFfnWeights& w);
void vision_merger_forward(VisionPass& pass, const VisionMergerWeights& w);
void run_vision_sublayer(const VisionSubLayer& s, VisionPass& pass, const ProjectorWeights& w);

// Every sub-layer in order. The input must be preprocess_image's for this projector.
Result<ImageEmbeddings> encode_image(const Projector& projector, const VisionInput& input,
                                     ThreadPool& pool);

} // namespace pshard
