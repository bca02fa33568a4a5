// Hyperparameters of a vision projector file (llama.cpp's "mmproj" GGUF, as its
// multimodal converters write it) for the Qwen2-VL, Qwen2.5-VL and Qwen3-VL / Qwen3.5
// families: `general.architecture` is
// "clip", the vision tower's shape lives under `clip.vision.*`, the kind of projector in
// `clip.projector_type`:
//
//   key                                          qwen2vl_merger     qwen2.5vl_merger
//   clip.projector_type                          "qwen2vl_merger"   "qwen2.5vl_merger"
//   clip.has_vision_encoder                      true (optional)
//   clip.vision.embedding_length        C        required
//   clip.vision.feed_forward_length     F        required
//   clip.vision.block_count             L        required
//   clip.vision.attention.head_count    H        required (C / H even, a multiple of 4)
//   clip.vision.attention.layer_norm_epsilon     required
//   clip.vision.patch_size              p        required (14)
//   clip.vision.image_size                       required: the cap on an image's longer side
//   clip.vision.projection_dim          P        required: the language model's n_embd
//   clip.vision.image_mean / image_std           3 floats each, required
//   clip.vision.spatial_merge_size               2 if present
//   clip.vision.n_wa_pattern                     absent or 0    optional: every n-th block
//                                                               attends fully, the others
//                                                               within windows
//   clip.vision.window_size                      -              optional, 112 pixels
//   clip.use_gelu / clip.use_silu                the blocks' FFN activation (neither:
//                                                quick GELU, Qwen2-VL's)
//
// Qwen2-VL normalises with LayerNorm (weight and bias) and runs a GELU-family FFN
// (up, down); Qwen2.5-VL normalises with RMSNorm (weight only) and runs a gated SiLU FFN
// (gate, up, down), every projection with a bias.
//
// qwen3vl_merger (Qwen3-VL, and Qwen3.5's tower) is Qwen2-VL's block (LayerNorm, GELU's
// tanh form as HF's gelu_pytorch_tanh, no windows) with 16-pixel patches, a patch bias, a
// learned position table (v.position_embd, side x side entries resized to the image's
// patch grid) and fused q/k/v; blocks with v.deepstack.N.* tensors (llama.cpp decides by
// the tensors, and so does pshard; clip.vision.is_deepstack_layers says the same) also
// feed a merger of their own output, whose rows the language model adds after its first
// layers (DeepStack).
//
//   PSHARD_ASSIGN_OR_RETURN(ProjectorHParams hp, read_projector_hparams(*file));
//   hp.merged_patch();   // 28: image sides are rounded to a multiple of it
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

enum class ProjectorType : uint8_t { kQwen2Vl, kQwen25Vl, kQwen3Vl };
enum class VisionAct : uint8_t { kQuickGelu, kGelu, kGeluTanh, kSilu };

struct ProjectorHParams {
  ProjectorType type = ProjectorType::kQwen25Vl;
  int64_t n_embd = 0, n_ff = 0, n_layer = 0, n_head = 0;
  int64_t patch_size = 14;
  int64_t image_size = 0;     // the longer side is capped to this many pixels
  int64_t projection_dim = 0; // the language model's embedding width
  int64_t n_merge = 2;        // patches per side of one image token
  int64_t n_wa_pattern = 0;   // 0: every block attends fully
  int64_t window_size = 112;  // pixels per side of an attention window
  float eps = 1e-6f;
  float mean[3] = {0, 0, 0}, std[3] = {1, 1, 1};
  VisionAct act = VisionAct::kQuickGelu;
  // qwen3vl_merger: the position table's side (entries side x side) and the blocks whose
  // output feeds a DeepStack merger, ascending.
  int64_t pos_side = 0;
  std::vector<int64_t> deepstack;
  // How big an image is made (set_image_tokens; not in the file): max_image_tokens 0 caps
  // the longer side at image_size; else the image keeps its size rounded to whole image
  // tokens, shrunk to at most max_image_tokens and grown to at least min_image_tokens
  // (Hugging Face's smart_resize, llama.cpp's --image-max-tokens / --image-min-tokens).
  int64_t min_image_tokens = 0, max_image_tokens = 0;

  int64_t head_dim() const { return n_embd / n_head; }
  bool rms_norm() const { return type == ProjectorType::kQwen25Vl; } // else LayerNorm
  bool gated_ffn() const { return type == ProjectorType::kQwen25Vl; }
  bool qwen3() const { return type == ProjectorType::kQwen3Vl; }
  int64_t merged_patch() const { return patch_size * n_merge; }
  // The DeepStack merger block `block` feeds (its index in `deepstack`), or -1.
  int64_t deepstack_index(int64_t block) const {
    for (size_t k = 0; k < deepstack.size(); ++k)
      if (deepstack[k] == block)
        return static_cast<int64_t>(k);
    return -1;
  }
  // Image tokens per side of an attention window.
  int64_t window_tokens() const { return window_size / merged_patch(); }
  bool full_attention(int64_t block) const {
    return n_wa_pattern <= 0 || (block + 1) % n_wa_pattern == 0;
  }
};

// "qwen2vl_merger" / "qwen2.5vl_merger" / "qwen3vl_merger"
const char* projector_type_name(ProjectorType t);

// Fails naming the key for anything missing or inconsistent, and names the fix for a
// file that is not a projector (a language model given as --mmproj) or a projector type
// pshard does not run.
Result<ProjectorHParams> read_projector_hparams(const gguf::GgufFile& file);

// Sets the image token limits (both 0: the cap on the longer side); kInvalidArgument for
// a negative count, a minimum without a maximum or above it, or more than 65536 tokens.
Status set_image_tokens(ProjectorHParams& hp, int64_t min_tokens, int64_t max_tokens);

} // namespace pshard
