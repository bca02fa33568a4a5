#include "tools/pshard-mkmodel/projector_generator.h"

#include "runtime/gguf/gguf_writer.h"
#include "runtime/vision/projector_layout.h"
#include "tools/pshard-mkmodel/random_tensors.h"

namespace pshard {
namespace {

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

gguf::Value floats(std::initializer_list<float> v) {
  gguf::Array a{gguf::ValueType::kFloat32, {}};
  for (float x : v)
    a.items.push_back({x});
  return {a};
}

ProjectorHParams hparams_of(const ProjectorSpec& s) {
  ProjectorHParams hp;
  hp.type = s.type;
  hp.n_embd = s.n_embd;
  hp.n_ff = s.n_ff;
  hp.n_layer = s.n_layer;
  hp.n_head = s.n_head;
  hp.patch_size = s.patch_size;
  hp.image_size = s.image_size;
  hp.projection_dim = s.projection_dim;
  hp.n_wa_pattern = s.type == ProjectorType::kQwen25Vl ? s.n_wa_pattern : 0;
  hp.window_size = s.window_size;
  hp.act = s.type == ProjectorType::kQwen25Vl ? VisionAct::kSilu : VisionAct::kQuickGelu;
  return hp;
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
  w.set("clip.vision.attention.layer_norm_epsilon", {1e-6f});
  w.set("clip.vision.patch_size", {u32(hp.patch_size)});
  w.set("clip.vision.image_size", {u32(hp.image_size)});
  w.set("clip.vision.projection_dim", {u32(hp.projection_dim)});
  w.set("clip.vision.spatial_merge_size", {u32(hp.n_merge)});
  // Qwen2-VL's preprocessor values (the CLIP ones).
  w.set("clip.vision.image_mean", floats({0.48145466f, 0.4578275f, 0.40821073f}));
  w.set("clip.vision.image_std", floats({0.26862954f, 0.26130258f, 0.27577711f}));
  if (hp.type == ProjectorType::kQwen25Vl) {
    w.set("clip.use_silu", {true});
    w.set("clip.vision.n_wa_pattern", {u32(hp.n_wa_pattern)});
    w.set("clip.vision.window_size", {u32(hp.window_size)});
  }
}

} // namespace

Status write_projector(const ProjectorSpec& s, const std::string& path) {
  const ProjectorHParams hp = hparams_of(s);
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
      Status st = t.matrix ? add_random_matrix(w, t.name, s.type_matrices, t.dims, s.seed)
                  : t.bias ? add_random_vector(w, t.name, t.dims[0], 0.0f, 0.05f, s.seed)
                           : add_random_vector(w, t.name, t.dims[0], 1.0f, 0.1f, s.seed);
      PSHARD_RETURN_IF_ERROR(st);
    }
  return w.write(path, gguf::GgufWriter::WriteOptions{s.sparse, 0});
}

} // namespace pshard
