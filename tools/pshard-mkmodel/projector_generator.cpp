#include "tools/pshard-mkmodel/projector_generator.h"

#include "runtime/gguf/gguf_writer.h"
#include "runtime/vision/projector_layout.h"
#include "tools/pshard-mkmodel/random_tensors.h"

#include <algorithm>

namespace pshard {
namespace {

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

gguf::Value rgb(const float v[3]) {
  gguf::Array a{gguf::ValueType::kFloat32, {}};
  for (int c = 0; c < 3; ++c)
    a.items.push_back({v[c]});
  return {a};
}

void write_metadata(const ProjectorHParams& hp, gguf::GgufWriter& w) {
  w.set("general.architecture", {std::string("clip")});
  w.set("general.name", {std::string("pshard-mkmodel projector")});
  w.set("clip.projector_type", {std::string(projector_type_name(hp.type))});
  w.set("clip.has_vision_encoder", {true});
  w.set("clip.has_text_encoder", {false});
  w.set("clip.vision.embedding_length", {u32(hp.n_embd)});
  w.set("clip.vision.feed_forward_length", {u32(hp.n_ff)});
  w.set("clip.vision.block_count", {u32(hp.n_layer)});
  w.set("clip.vision.attention.head_count", {u32(hp.n_head)});
  w.set("clip.vision.attention.layer_norm_epsilon", {hp.eps});
  w.set("clip.vision.patch_size", {u32(hp.patch_size)});
  w.set("clip.vision.image_size", {u32(hp.image_size)});
  w.set("clip.vision.projection_dim", {u32(hp.projection_dim)});
  w.set("clip.vision.spatial_merge_size", {u32(hp.n_merge)});
  w.set("clip.vision.image_mean", rgb(hp.mean));
  w.set("clip.vision.image_std", rgb(hp.std));
  if (hp.type == ProjectorType::kQwen25Vl) {
    w.set("clip.use_silu", {true});
    w.set("clip.vision.n_wa_pattern", {u32(hp.n_wa_pattern)});
    w.set("clip.vision.window_size", {u32(hp.window_size)});
  }
  if (hp.qwen3()) { // as llama.cpp's Qwen3-VL converter writes them
    w.set("clip.use_gelu", {true});
    gguf::Array taps{gguf::ValueType::kBool, {}};
    for (int64_t b = 0; b < hp.n_layer; ++b)
      taps.items.push_back({hp.deepstack_index(b) >= 0});
    w.set("clip.vision.is_deepstack_layers", {taps});
  }
}

} // namespace

ProjectorHParams small_projector_hparams() {
  ProjectorHParams hp;
  hp.n_embd = 64;
  hp.n_ff = 128;
  hp.n_layer = 4;
  hp.n_head = 4;
  hp.image_size = 448;
  hp.projection_dim = 64;
  hp.n_wa_pattern = 2;
  hp.window_size = 56;
  // Qwen2-VL's preprocessor values (the CLIP ones).
  const float mean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
  const float std[3] = {0.26862954f, 0.26130258f, 0.27577711f};
  for (int c = 0; c < 3; ++c) {
    hp.mean[c] = mean[c];
    hp.std[c] = std[c];
  }
  return hp;
}

Status write_projector(const ProjectorSpec& s, const std::string& path) {
  ProjectorHParams hp = s.hp;
  const bool qwen25 = hp.type == ProjectorType::kQwen25Vl;
  hp.act = qwen25 ? VisionAct::kSilu : hp.qwen3() ? VisionAct::kGeluTanh : VisionAct::kQuickGelu;
  hp.n_wa_pattern = qwen25 ? hp.n_wa_pattern : 0;
  if (hp.qwen3()) {
    hp.pos_side = std::max<int64_t>(1, hp.image_size / std::max<int64_t>(1, hp.patch_size));
    for (int64_t b : hp.deepstack)
      if (b < 0 || b >= hp.n_layer)
        return invalid_argument("--v-deepstack names block " + std::to_string(b) +
                                "; the tower has blocks 0 to " + std::to_string(hp.n_layer - 1));
  } else if (!hp.deepstack.empty()) {
    return invalid_argument("--v-deepstack is for qwen3vl_merger projectors");
  }
  if (hp.n_embd <= 0 || hp.n_head <= 0 || hp.n_embd % hp.n_head != 0 || hp.head_dim() % 4 != 0)
    return invalid_argument("--v-n-embd must be a multiple of --v-n-head with a head size that "
                            "is a multiple of 4");
  if (hp.n_layer <= 0 || hp.n_ff <= 0 || hp.patch_size <= 0 || hp.projection_dim <= 0 ||
      hp.image_size < hp.merged_patch())
    return invalid_argument("the projector's blocks, FFN width, patch size and projection "
                            "width must be positive and --v-image-size at least two patches");
  if (hp.n_wa_pattern > 0 && hp.window_tokens() < 1)
    return invalid_argument("--v-window-size must be at least two patches");
  gguf::GgufWriter w;
  write_metadata(hp, w);
  for (const VisionSubLayer& sl : vision_sublayers(hp))
    for (const VisionTensorSpec& t : vision_tensor_specs(hp, sl)) {
      Status st = t.matrix || t.table
                      ? add_random_matrix(w, t.name, s.type_matrices, t.dims, s.seed)
                  : t.bias ? add_random_vector(w, t.name, t.dims[0], 0.0f, 0.05f, s.seed)
                           : add_random_vector(w, t.name, t.dims[0], 1.0f, 0.1f, s.seed);
      PSHARD_RETURN_IF_ERROR(st);
    }
  return w.write(path, gguf::GgufWriter::WriteOptions{s.sparse, 0});
}

} // namespace pshard
