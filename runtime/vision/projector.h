// A vision projector file opened for encoding images: its hyperparameters and its
// weights bound in place to the mapping (projector_layout.h names every tensor). The
// patch kernel is the one tensor prepared at load: a still image is both temporal
// frames of Qwen2-VL's 3D patch convolution, so the two kernel halves are summed once
// into one F32 matrix of C rows by 3·p·p. A fused q/k/v (qwen3vl_merger) is bound as three
// views of its row blocks.
//
//   PSHARD_ASSIGN_OR_RETURN(auto proj, Projector::open("mmproj-qwen2.5vl.gguf"));
//   PSHARD_RETURN_IF_ERROR(proj->check_language_model(lm_hparams.n_embd));
//   proj->hparams().projection_dim;
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/kernels/matmul.h"
#include "runtime/model/weights.h"
#include "runtime/vision/projector_hparams.h"

#include <memory>
#include <string>
#include <vector>

namespace pshard {

// A LayerNorm (weight and bias) or an RMSNorm (bias null).
struct VisionNorm {
  VectorWeight weight, bias;
};

struct VisionLinear {
  MatrixView w;
  VectorWeight b;
};

struct VisionAttentionWeights {
  VisionNorm norm;
  VisionLinear q, k, v, out;
};

// A DeepStack merger (qwen3vl_merger): LayerNorm over the four patches of an image token
// (4C), fc1, GELU (erf), fc2 -> P values per image token.
struct VisionDeepstackWeights {
  VisionNorm norm;
  VisionLinear fc1, fc2; // fc1.w.data null for a block without one
};

struct VisionFfnWeights {
  VisionNorm norm;
  VisionLinear gate, up, down; // gate.w.data null without a gate (qwen2vl_merger)
  VisionDeepstackWeights deepstack;
};

struct VisionMergerWeights {
  VisionNorm norm;
  VisionLinear fc0, fc2; // mm.0 (4C -> 4C), GELU, mm.2 (4C -> P)
};

struct ProjectorWeights {
  std::vector<float> patch_kernel; // C x 3·p·p, both temporal halves summed
  MatrixView patch;                // over patch_kernel
  VectorWeight patch_bias;         // qwen3vl_merger: C values; else null
  VectorWeight positions;          // qwen3vl_merger: side² rows of C (raster order); else null
  std::vector<VisionAttentionWeights> attn;
  std::vector<VisionFfnWeights> ffn;
  VisionMergerWeights merger;
};

class Projector {
public:
  static Result<std::unique_ptr<Projector>> open(const std::string& path);

  const ProjectorHParams& hparams() const { return hp_; }
  // How big images are made (set_image_tokens in projector_hparams.h).
  Status set_image_tokens(int64_t min_tokens, int64_t max_tokens) {
    return pshard::set_image_tokens(hp_, min_tokens, max_tokens);
  }
  const ProjectorWeights& weights() const { return w_; }
  const std::string& path() const { return file_->path(); }
  const gguf::GgufFile& file() const { return *file_; } // its fingerprint names it
  // Refuses a language model whose embedding width is not the projector's output, or one
  // that takes DeepStack rows (`lm_deepstack` layers, Qwen3-VL) from a projector with
  // another number of DeepStack mergers (a model taking none ignores them: Qwen3.5).
  Status check_language_model(int64_t lm_n_embd, int64_t lm_deepstack = 0) const;

private:
  std::unique_ptr<gguf::GgufFile> file_;
  ProjectorHParams hp_;
  ProjectorWeights w_;
};

} // namespace pshard
