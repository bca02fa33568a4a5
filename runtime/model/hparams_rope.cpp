// RoPE hyperparameters: base, rotated dimensions and the scaling a long-context model
// was trained with — linear (positions divided by the factor), llama3 (Llama 3.1+:
// per-frequency divisors, from the rope_freqs tensor or from these keys) and YaRN
// (Qwen2.5/Qwen3 long-context: interpolation blended per dimension, attention scaled).
#include "runtime/model/hparams_keys.h"

#include <cmath>

namespace pshard {
namespace {

Status positive(const HParamKeys& k, const char* suffix, float v) {
  if (!(v > 0.0f))
    return invalid_format(k.key(suffix) + " must be positive, got " + std::to_string(v));
  return Status::ok_status();
}

Status read_llama3(const HParamKeys& k, ModelHParams& hp) {
  hp.rope_scaling = RopeScaling::kLlama3;
  hp.rope_scaling_factor = 8.0f;
  hp.rope_low_freq_factor = 1.0f;
  hp.rope_high_freq_factor = 4.0f;
  hp.rope_ctx_orig = 8192;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.factor", &hp.rope_scaling_factor));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.low_freq_factor", &hp.rope_low_freq_factor));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.high_freq_factor", &hp.rope_high_freq_factor));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.original_context_length", &hp.rope_ctx_orig));
  PSHARD_RETURN_IF_ERROR(positive(k, "rope.scaling.factor", hp.rope_scaling_factor));
  PSHARD_RETURN_IF_ERROR(positive(k, "rope.scaling.low_freq_factor", hp.rope_low_freq_factor));
  if (!(hp.rope_high_freq_factor > hp.rope_low_freq_factor))
    return invalid_format(k.key("rope.scaling.high_freq_factor") +
                          " must be larger than " + k.key("rope.scaling.low_freq_factor"));
  if (hp.rope_ctx_orig <= 0)
    return invalid_format(k.key("rope.scaling.original_context_length") + " must be positive");
  return Status::ok_status();
}

Status read_yarn(const HParamKeys& k, ModelHParams& hp, float factor) {
  hp.rope_scaling = RopeScaling::kYarn;
  hp.rope_freq_scale = 1.0f / factor;
  hp.rope_ctx_orig = hp.n_ctx_train;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.original_context_length", &hp.rope_ctx_orig));
  if (hp.rope_ctx_orig <= 0)
    return invalid_format(k.key("rope.scaling.original_context_length") + " must be positive");
  hp.yarn_ext_factor = 1.0f;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.yarn_ext_factor", &hp.yarn_ext_factor));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.attn_factor", &hp.yarn_attn_factor));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.yarn_attn_factor", &hp.yarn_attn_factor));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.yarn_beta_fast", &hp.yarn_beta_fast));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.yarn_beta_slow", &hp.yarn_beta_slow));
  PSHARD_RETURN_IF_ERROR(positive(k, "rope.scaling.attn_factor", hp.yarn_attn_factor));
  if (!(hp.yarn_beta_fast > hp.yarn_beta_slow) || !(hp.yarn_beta_slow > 0.0f))
    return invalid_format(k.key("rope.scaling.yarn_beta_fast") + " must exceed " +
                          k.key("rope.scaling.yarn_beta_slow") + ", both positive");
  return Status::ok_status();
}

// M-RoPE: rope.dimension_sections, four counts of rotary pairs (temporal, height, width,
// and a fourth that Qwen2-VL's files write as 0). Their sum must cover the head's pairs.
// The interleaved form (Qwen3-VL, Qwen3.5) must cover every pair too: for text it is then
// NeoX RoPE.
Status read_sections(const HParamKeys& k, ModelHParams& hp) {
  const std::string key = k.key("rope.dimension_sections");
  const bool interleaved = hp.family->interleaved_mrope;
  if (!hp.family->rope_sections && !(interleaved && k.has("rope.dimension_sections"))) {
    if (k.has("rope.dimension_sections"))
      return unsupported(key + " is set, but " + std::string(hp.family->name) +
                         " models have no multimodal RoPE; is general.architecture right?");
    return Status::ok_status();
  }
  if (!k.has("rope.dimension_sections"))
    return invalid_format("metadata key '" + key + "' is missing; it is required for " +
                          std::string(hp.family->name) + " models (multimodal RoPE)");
  PSHARD_ASSIGN_OR_RETURN(std::vector<int64_t> sec, k.file().get_int_array(key));
  if (sec.size() < 3 || sec.size() > 4)
    return invalid_format(key + " has " + std::to_string(sec.size()) +
                          " entries; it must have 4 (temporal, height, width, 0)");
  if (sec.size() == 4 && sec[3] != 0)
    return unsupported(key + "[3] is " + std::to_string(sec[3]) +
                       "; pshard runs M-RoPE with three position components (the fourth 0)");
  int64_t sum = 0;
  for (int c = 0; c < 3; ++c) {
    if (sec[static_cast<size_t>(c)] < 0)
      return invalid_format(key + " has a negative entry");
    sum += sec[static_cast<size_t>(c)];
    hp.rope_sections[c] = static_cast<int32_t>(sec[static_cast<size_t>(c)]);
  }
  if (sum * 2 != hp.rope_dim)
    return invalid_format(key + " sums to " + std::to_string(sum) + " pairs, but " +
                          k.key("rope.dimension_count") + " " + std::to_string(hp.rope_dim) +
                          " rotates " + std::to_string(hp.rope_dim / 2));
  return Status::ok_status();
}

// LongRoPE is the file's rope_factors_long / _short tensors (the converters write no
// scaling type): the context they switch at and the magnitude of cos/sin come from keys.
Status read_long_rope(const HParamKeys& k, ModelHParams& hp) {
  const gguf::GgufFile& f = k.file();
  const bool has_long = f.find_tensor("rope_factors_long.weight") != nullptr,
             has_short = f.find_tensor("rope_factors_short.weight") != nullptr;
  if (!has_long && !has_short)
    return Status::ok_status();
  if (!hp.family->long_rope)
    return unsupported("the file has LongRoPE factors (rope_factors_long/_short), which " +
                       std::string(hp.family->name) +
                       " models do not use; is general.architecture right?");
  if (has_long != has_short)
    return invalid_format(std::string("tensor '") +
                          (has_long ? "rope_factors_short" : "rope_factors_long") +
                          ".weight' is missing: LongRoPE needs both factor tensors");
  hp.long_rope = true;
  hp.rope_ctx_orig = hp.n_ctx_train;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.original_context_length", &hp.rope_ctx_orig));
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.attn_factor", &hp.yarn_attn_factor));
  if (hp.rope_ctx_orig <= 0 || !(hp.yarn_attn_factor > 0.0f) || !std::isfinite(hp.yarn_attn_factor))
    return invalid_format(k.key("rope.scaling.original_context_length") + " and " +
                          k.key("rope.scaling.attn_factor") + " must be positive");
  return Status::ok_status();
}

} // namespace

Status read_rope(const HParamKeys& k, ModelHParams& hp) {
  PSHARD_RETURN_IF_ERROR(k.optional("rope.freq_base", &hp.rope_freq_base));
  PSHARD_RETURN_IF_ERROR(positive(k, "rope.freq_base", hp.rope_freq_base));
  hp.rope_dim = hp.head_dim;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.dimension_count", &hp.rope_dim));
  if (hp.rope_dim <= 0 || hp.rope_dim > hp.head_dim || hp.rope_dim % 2 != 0)
    return invalid_format(k.key("rope.dimension_count") + " " + std::to_string(hp.rope_dim) +
                          " must be even and within the head size " + std::to_string(hp.head_dim));
  PSHARD_RETURN_IF_ERROR(read_sections(k, hp));
  PSHARD_RETURN_IF_ERROR(read_long_rope(k, hp));
  if (hp.long_rope)
    return Status::ok_status(); // its factors are the scaling (no rope.scaling.type)

  std::string type = "none";
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.type", &type));
  float factor = 1.0f;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.factor", &factor));
  // Older converters wrote only the linear factor.
  if (!k.has("rope.scaling.type") && k.has("rope.scale_linear")) {
    type = "linear";
    PSHARD_RETURN_IF_ERROR(k.optional("rope.scale_linear", &factor));
  }
  if (type == "none" || ((type == "linear" || type == "yarn") && factor == 1.0f))
    return Status::ok_status();
  if (type == "linear" || type == "yarn") {
    PSHARD_RETURN_IF_ERROR(positive(k, "rope.scaling.factor", factor));
    if (type == "yarn")
      return read_yarn(k, hp, factor);
    hp.rope_scaling = RopeScaling::kLinear;
    hp.rope_freq_scale = 1.0f / factor;
    return Status::ok_status();
  }
  if (type == "llama3")
    return read_llama3(k, hp);
  return unsupported(k.key("rope.scaling.type") + " '" + type +
                     "' is not supported; pshard supports none, linear, llama3 (or the "
                     "rope_freqs tensor) and yarn");
}

} // namespace pshard
