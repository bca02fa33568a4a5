// The vision tower of a VLM as the planner sees it: the projector file's sub-layers
// (runtime/vision/projector_layout.h: v.patch, v.attn[i], v.ffn[i], v.merger) with their
// tensors, weight bytes and costs for an image of N patches. Built from the projector's
// metadata only, like build_model_graph for the language model.
//
//   PSHARD_ASSIGN_OR_RETURN(auto file,
//       gguf::GgufFile::open("mmproj.gguf", gguf::OpenMode::kMetadataOnly));
//   PSHARD_ASSIGN_OR_RETURN(planner::VisionGraph g, planner::build_vision_graph(*file));
//   int64_t n = g.patches_for({1920, 1080});          // the patch grid after preprocessing
//   double f = g.flops(g.sublayers[1], n);            // v.attn[0] for that image
//
// Cost model for N patches of width C (FFN F, projection P, patch p, window W patches):
//   v.patch    2·N·3p²·C            (the two temporal halves of the kernel summed: one matmul)
//   v.attn[i]  8·N·C² + 4·N·S·C     S = N for a full-attention block, else W
//   v.ffn[i]   2·N·k·C·F            k = 3 gated (qwen2.5vl), 2 otherwise
//   v.merger   2·(N/4)·(16C² + 4C·P) (after the 2x2 merge)
// Attention scratch: untiled, the scores of every head over the span (H·N·S floats: what a
// baseline allocates, N² for a full block); tiled, one tile × tile block of scores per
// head plus its running max and sum, whatever N is.
#pragma once

#include "pshard/Planner/ModelGraph.h"
#include "runtime/vision/image.h"
#include "runtime/vision/projector_layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard::planner {

// One matrix a vision sub-layer applies: to every patch, or (the merger) to every merged
// token, N / rows_divisor rows.
struct VisionMatmul {
  TensorType type = TensorType::kF32;
  int64_t rows = 0, cols = 0; // output and input features
  uint64_t matrix_bytes = 0;  // bytes read (the patch kernel: both temporal halves)
  int64_t rows_divisor = 1;
};

struct VisionSubLayerInfo {
  VisionSubLayer id; // kind, block, name ("v.attn[3]")
  std::vector<TensorRef> tensors;
  uint64_t weight_bytes = 0;
  std::vector<VisionMatmul> matmuls;
  bool full_attention = false; // attention: attends over the whole image, not a window
};

struct VisionGraph {
  ProjectorHParams hp;
  std::vector<VisionSubLayerInfo> sublayers; // execution order
  ModelFingerprint fingerprint;              // of the projector file
  uint64_t file_size = 0;

  uint64_t total_weight_bytes() const;
  // Patches of an image of `size` pixels after preprocessing (vision_input_size).
  int64_t patches_for(ImageSize size) const;
  // Patches each query of an attention sub-layer attends to at N patches.
  int64_t attention_span(const VisionSubLayerInfo& s, int64_t n_patches) const;
  double flops(const VisionSubLayerInfo& s, int64_t n_patches) const;
  // The hidden state (F32) that crosses PCIe between a CPU and a GPU sub-layer.
  uint64_t hidden_bytes(int64_t n_patches) const;
  // GPU activations of one pass (F32): input patches, hidden, residual, q/k/v, attention
  // output, FFN intermediates, merger input/hidden/output.
  uint64_t activation_bytes(int64_t n_patches) const;
  // Attention scratch of the largest attention sub-layer: tile 0 = untiled.
  uint64_t attention_scratch_bytes(int64_t n_patches, int64_t tile) const;
};

// Fails naming the key or tensor on a file read_projector_hparams refuses, or one that
// lacks a tensor the layout names or has it in another shape.
Result<VisionGraph> build_vision_graph(const gguf::GgufFile& file);

// From hyperparameters alone, every matrix of `type` (tests and predictions on shapes
// with no file); offsets are synthetic.
VisionGraph synthetic_vision_graph(const ProjectorHParams& hp, TensorType type);

} // namespace pshard::planner
