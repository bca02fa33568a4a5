// Multi-head latent attention's hyperparameters (DeepSeek-V2/V3; families with
// latent_attention): the latent's and the queries' ranks, the per-head widths, and the
// scores' scale, which carries YaRN's magnitude in these models.
#include "runtime/model/hparams_keys.h"

#include <cmath>

namespace pshard {

Status read_latent_dims(const HParamKeys& k, ModelHParams& hp) {
  const gguf::GgufFile& f = k.file();
  PSHARD_RETURN_IF_ERROR(k.required("attention.kv_lora_rank", &hp.kv_lora_rank));
  PSHARD_RETURN_IF_ERROR(k.optional("attention.q_lora_rank", &hp.q_lora_rank));
  if (hp.kv_lora_rank <= 0 || hp.q_lora_rank < 0)
    return invalid_format(k.key("attention.kv_lora_rank") + " must be positive and " +
                          k.key("attention.q_lora_rank") + " not negative");
  // llama.cpp's rule: the *_mla keys say the file splits each head's key and value
  // expansions (attn_k_b, attn_v_b: the absorbed form, the latent cached). Files converted
  // before 2025 have one attn_kv_b and key_length/value_length for a head: each head's keys
  // and values are expanded and cached (mla_attention.cpp's older form).
  hp.latent_cache = k.has("attention.key_length_mla") || k.has("attention.value_length_mla");
  const char* key = hp.latent_cache ? "attention.key_length_mla" : "attention.key_length";
  const char* value = hp.latent_cache ? "attention.value_length_mla" : "attention.value_length";
  PSHARD_RETURN_IF_ERROR(k.required(key, &hp.head_dim));
  PSHARD_RETURN_IF_ERROR(k.required(value, &hp.head_dim_v));
  if (hp.head_dim <= 0 || hp.head_dim_v <= 0)
    return invalid_format(k.key(key) + " and " + k.key(value) + " must be positive");
  if (!hp.latent_cache && f.find_tensor("blk.0.attn_k_b.weight"))
    return invalid_format("tensor 'blk.0.attn_k_b.weight' needs " +
                          k.key("attention.key_length_mla") + " and " +
                          k.key("attention.value_length_mla") + ", which the file does not have");
  // The absorbed form: every query head attends over the one latent per position; the older
  // one: each head over its own keys.
  hp.n_head_kv = hp.latent_cache ? 1 : hp.n_head;
  return Status::ok_status();
}

Status read_latent_scale(const HParamKeys& k, ModelHParams& hp) {
  if (!hp.latent_attention())
    return Status::ok_status();
  if (hp.rope_dim >= hp.head_dim)
    return invalid_format(k.key("rope.dimension_count") + " " + std::to_string(hp.rope_dim) +
                          " must be less than a head's " + std::to_string(hp.head_dim) +
                          " values (each head has an unrotated part)");
  // What a file of the absorbed form says the cache holds per position must be the latent
  // and its rotated part (the older form's key_length/value_length were its head sizes).
  int64_t key_length = hp.attn_key_dim(), value_length = hp.attn_value_dim();
  if (hp.latent_cache) {
    PSHARD_RETURN_IF_ERROR(k.optional("attention.key_length", &key_length));
    PSHARD_RETURN_IF_ERROR(k.optional("attention.value_length", &value_length));
  }
  if (key_length != hp.attn_key_dim() || value_length != hp.attn_value_dim())
    return invalid_format(k.key("attention.key_length") + " " + std::to_string(key_length) +
                          " and " + k.key("attention.value_length") + " " +
                          std::to_string(value_length) + " must be the latent's " +
                          std::to_string(hp.attn_key_dim()) + " and " +
                          std::to_string(hp.attn_value_dim()) +
                          " (kv_lora_rank + the rotated "
                          "dimensions, and kv_lora_rank)");
  // YaRN as DeepSeek applies it (llama.cpp likewise): the rotation's magnitude is the
  // file's attn_factor alone — YaRN's own 1 + 0.1 ln(factor) cancelled — and the scores
  // carry mscale² instead, mscale = attn_factor * (1 + yarn_log_multiplier * ln(factor))
  // (the file's multiplier is 0.1 * the model's mscale_all_dim).
  float mscale = 1.0f;
  if (hp.rope_scaling == RopeScaling::kYarn && hp.rope_freq_scale < 1.0f) {
    const float log_factor = std::log(1.0f / hp.rope_freq_scale);
    float log_mul = 0.0f;
    PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.yarn_log_multiplier", &log_mul));
    if (!std::isfinite(log_mul) || log_mul < 0.0f)
      return invalid_format(k.key("rope.scaling.yarn_log_multiplier") + " must not be negative");
    mscale = hp.yarn_attn_factor * (1.0f + log_mul * log_factor);
    hp.yarn_attn_factor /= 1.0f + 0.1f * log_factor;
  }
  // The scale of the un-absorbed scores: a head's query width before absorption.
  hp.attn_scale = mscale * mscale / std::sqrt(static_cast<float>(hp.head_dim));
  return Status::ok_status();
}

} // namespace pshard
