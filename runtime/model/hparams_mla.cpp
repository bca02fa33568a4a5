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
  // Files converted before llama.cpp split attn_kv_b (2025) hold each head's key and value
  // expansion as one matrix, which the absorbed form would need transposed.
  if (!f.find_tensor("blk.0.attn_k_b.weight") && f.find_tensor("blk.0.attn_kv_b.weight"))
    return unsupported("this file has the older form of DeepSeek's attention (attn_kv_b, "
                       "without attn_k_b/attn_v_b); pshard runs the newer one: convert the "
                       "model again with a llama.cpp convert_hf_to_gguf.py from mid-2025 or "
                       "later, or download a recent conversion");
  PSHARD_RETURN_IF_ERROR(k.required("attention.key_length_mla", &hp.head_dim));
  PSHARD_RETURN_IF_ERROR(k.required("attention.value_length_mla", &hp.head_dim_v));
  if (hp.head_dim <= 0 || hp.head_dim_v <= 0)
    return invalid_format(k.key("attention.key_length_mla") + " and " +
                          k.key("attention.value_length_mla") + " must be positive");
  // Every query head attends over the one latent per position.
  hp.n_head_kv = 1;
  return Status::ok_status();
}

Status read_latent_scale(const HParamKeys& k, ModelHParams& hp) {
  if (!hp.latent_attention())
    return Status::ok_status();
  if (hp.rope_dim >= hp.head_dim)
    return invalid_format(k.key("rope.dimension_count") + " " + std::to_string(hp.rope_dim) +
                          " must be less than " + k.key("attention.key_length_mla") + " " +
                          std::to_string(hp.head_dim) + " (each head has an unrotated part)");
  // What the file says the cache holds per position must be the latent and its rotated part.
  int64_t key_length = hp.attn_key_dim(), value_length = hp.attn_value_dim();
  PSHARD_RETURN_IF_ERROR(k.optional("attention.key_length", &key_length));
  PSHARD_RETURN_IF_ERROR(k.optional("attention.value_length", &value_length));
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
