#include "runtime/vision/projector_hparams.h"

#include <limits>
#include <vector>

namespace pshard {
namespace {

constexpr const char* kTypeKey = "clip.projector_type";

Status missing(const std::string& key, const char* why) {
  return invalid_format("projector metadata key '" + key + "' is missing; " + why);
}

Status read_count(const gguf::GgufFile& f, const std::string& key, int64_t* out, bool required) {
  if (!f.find(key))
    return required ? missing(key, "it is required for a Qwen-VL projector") : Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(uint64_t v, f.get_uint(key));
  if (v == 0 || v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    return invalid_format("projector metadata '" + key + "' is " + std::to_string(v) +
                          "; it must be a positive count");
  *out = static_cast<int64_t>(v);
  return Status::ok_status();
}

Status read_triple(const gguf::GgufFile& f, const std::string& key, float out[3]) {
  if (!f.find(key))
    return missing(key, "it holds the 3 per-channel values images are normalised with");
  PSHARD_ASSIGN_OR_RETURN(std::vector<double> v, f.get_float_array(key));
  if (v.size() != 3)
    return invalid_format("projector metadata '" + key + "' has " + std::to_string(v.size()) +
                          " values; it must have 3 (red, green, blue)");
  for (int c = 0; c < 3; ++c)
    out[c] = static_cast<float>(v[static_cast<size_t>(c)]);
  return Status::ok_status();
}

Result<bool> read_flag(const gguf::GgufFile& f, const std::string& key) {
  if (!f.find(key))
    return false;
  return f.get_bool(key);
}

Result<ProjectorType> read_type(const gguf::GgufFile& f) {
  std::string arch;
  if (f.find("general.architecture")) {
    PSHARD_ASSIGN_OR_RETURN(arch, f.get_string("general.architecture"));
  }
  if (arch != "clip")
    return invalid_argument(
        "'" + f.path() + "' is not a vision projector: general.architecture is '" + arch +
        "', a projector file (mmproj-*.gguf, as llama.cpp's converters write it) has 'clip'");
  std::string key = kTypeKey;
  if (!f.find(key) && f.find("clip.vision.projector_type"))
    key = "clip.vision.projector_type";
  if (!f.find(key))
    return missing(kTypeKey, "it names the kind of projector (qwen2vl_merger, qwen2.5vl_merger, "
                             "qwen3vl_merger)");
  PSHARD_ASSIGN_OR_RETURN(std::string name, f.get_string(key));
  if (name == "qwen2vl_merger")
    return ProjectorType::kQwen2Vl;
  if (name == "qwen2.5vl_merger")
    return ProjectorType::kQwen25Vl;
  if (name == "qwen3vl_merger")
    return ProjectorType::kQwen3Vl;
  return unsupported("projector type '" + name + "' (" + key +
                     ") is not supported; pshard runs qwen2vl_merger, qwen2.5vl_merger and "
                     "qwen3vl_merger");
}

// qwen3vl_merger: the position table's side, and the DeepStack blocks, by their tensors.
Status read_qwen3_tables(const gguf::GgufFile& f, ProjectorHParams& hp) {
  const gguf::TensorInfo* pos = f.find_tensor("v.position_embd.weight");
  if (!pos || pos->dims.size() != 2 || pos->dims[0] != hp.n_embd)
    return invalid_format("a qwen3vl_merger projector needs tensor 'v.position_embd.weight' of " +
                          std::to_string(hp.n_embd) +
                          " x (side x side) values (its learned patch positions)");
  int64_t side = 1;
  while (side * side < pos->dims[1])
    ++side;
  if (side * side != pos->dims[1])
    return invalid_format("tensor 'v.position_embd.weight' has " + std::to_string(pos->dims[1]) +
                          " positions; a qwen3vl_merger table is a square grid (side x side)");
  hp.pos_side = side;
  for (int64_t b = 0; b < hp.n_layer; ++b)
    if (f.find_tensor("v.deepstack." + std::to_string(b) + ".fc1.weight"))
      hp.deepstack.push_back(b);
  return Status::ok_status();
}

Status check_shape(const ProjectorHParams& hp) {
  if (hp.n_embd % hp.n_head != 0 || hp.head_dim() % 4 != 0)
    return invalid_format("clip.vision.embedding_length " + std::to_string(hp.n_embd) +
                          " over clip.vision.attention.head_count " + std::to_string(hp.n_head) +
                          " must give a head size that is a multiple of 4 (2D rotary halves)");
  if (hp.n_merge != 2)
    return unsupported("clip.vision.spatial_merge_size " + std::to_string(hp.n_merge) +
                       " is not supported; Qwen-VL projectors merge 2x2 patches");
  if (hp.image_size < hp.merged_patch())
    return invalid_format("clip.vision.image_size " + std::to_string(hp.image_size) +
                          " is smaller than one image token (" + std::to_string(hp.merged_patch()) +
                          " pixels)");
  if (hp.n_wa_pattern > 0 && hp.window_tokens() < 1)
    return invalid_format("clip.vision.window_size " + std::to_string(hp.window_size) +
                          " is smaller than one image token (" + std::to_string(hp.merged_patch()) +
                          " pixels)");
  for (int c = 0; c < 3; ++c)
    if (!(hp.std[c] > 0.0f))
      return invalid_format("clip.vision.image_std must be positive in every channel");
  if (!(hp.eps > 0.0f))
    return invalid_format("clip.vision.attention.layer_norm_epsilon must be positive");
  return Status::ok_status();
}

} // namespace

const char* projector_type_name(ProjectorType t) {
  switch (t) {
  case ProjectorType::kQwen2Vl:
    return "qwen2vl_merger";
  case ProjectorType::kQwen25Vl:
    return "qwen2.5vl_merger";
  case ProjectorType::kQwen3Vl:
    break;
  }
  return "qwen3vl_merger";
}

Status set_image_tokens(ProjectorHParams& hp, int64_t min_tokens, int64_t max_tokens) {
  constexpr int64_t kMost = 65536;
  if (min_tokens < 0 || max_tokens < 0 || max_tokens > kMost)
    return invalid_argument("image token limits must be between 0 and " + std::to_string(kMost) +
                            ", got a minimum of " + std::to_string(min_tokens) +
                            " and a maximum of " + std::to_string(max_tokens));
  if (min_tokens > 0 && max_tokens == 0)
    return invalid_argument("a minimum of image tokens needs a maximum too (--image-max-tokens); "
                            "without one the image's longer side is capped at " +
                            std::to_string(hp.image_size) + " pixels");
  if (min_tokens > max_tokens)
    return invalid_argument("the minimum of image tokens (" + std::to_string(min_tokens) +
                            ") is above the maximum (" + std::to_string(max_tokens) + ")");
  hp.min_image_tokens = min_tokens;
  hp.max_image_tokens = max_tokens;
  return Status::ok_status();
}

Result<ProjectorHParams> read_projector_hparams(const gguf::GgufFile& f) {
  ProjectorHParams hp;
  PSHARD_ASSIGN_OR_RETURN(hp.type, read_type(f));
  if (f.find("clip.has_vision_encoder")) {
    PSHARD_ASSIGN_OR_RETURN(bool has, f.get_bool("clip.has_vision_encoder"));
    if (!has)
      return invalid_format("clip.has_vision_encoder is false: the file has no vision tower");
  }
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.embedding_length", &hp.n_embd, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.feed_forward_length", &hp.n_ff, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.block_count", &hp.n_layer, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.attention.head_count", &hp.n_head, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.patch_size", &hp.patch_size, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.image_size", &hp.image_size, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.projection_dim", &hp.projection_dim, true));
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.spatial_merge_size", &hp.n_merge, false));
  const std::string eps_key = "clip.vision.attention.layer_norm_epsilon";
  if (!f.find(eps_key))
    return missing(eps_key, "it is required for a Qwen-VL projector");
  PSHARD_ASSIGN_OR_RETURN(double eps, f.get_float(eps_key));
  hp.eps = static_cast<float>(eps);
  PSHARD_RETURN_IF_ERROR(read_triple(f, "clip.vision.image_mean", hp.mean));
  PSHARD_RETURN_IF_ERROR(read_triple(f, "clip.vision.image_std", hp.std));
  if (f.find("clip.vision.n_wa_pattern")) {
    PSHARD_ASSIGN_OR_RETURN(uint64_t wa, f.get_uint("clip.vision.n_wa_pattern"));
    hp.n_wa_pattern = static_cast<int64_t>(wa);
    if (hp.n_wa_pattern > 0 && hp.type != ProjectorType::kQwen25Vl)
      return invalid_format("clip.vision.n_wa_pattern is set, but " +
                            std::string(projector_type_name(hp.type)) +
                            " projectors attend fully in every block (window attention is "
                            "Qwen2.5-VL's)");
    if (hp.n_wa_pattern > hp.n_layer)
      return invalid_format("clip.vision.n_wa_pattern " + std::to_string(hp.n_wa_pattern) +
                            " exceeds clip.vision.block_count " + std::to_string(hp.n_layer));
  }
  PSHARD_RETURN_IF_ERROR(read_count(f, "clip.vision.window_size", &hp.window_size, false));
  PSHARD_ASSIGN_OR_RETURN(bool gelu, read_flag(f, "clip.use_gelu"));
  PSHARD_ASSIGN_OR_RETURN(bool silu, read_flag(f, "clip.use_silu"));
  if (gelu && silu)
    return invalid_format("clip.use_gelu and clip.use_silu are both true; a projector has one "
                          "FFN activation");
  hp.act = silu ? VisionAct::kSilu : gelu ? VisionAct::kGelu : VisionAct::kQuickGelu;
  if (hp.qwen3()) {
    if (silu)
      return invalid_format("clip.use_silu is true, but qwen3vl_merger blocks run GELU");
    hp.act = VisionAct::kGeluTanh; // HF's gelu_pytorch_tanh, llama.cpp's FFN_GELU
    PSHARD_RETURN_IF_ERROR(read_qwen3_tables(f, hp));
  }
  PSHARD_RETURN_IF_ERROR(check_shape(hp));
  return hp;
}

} // namespace pshard
