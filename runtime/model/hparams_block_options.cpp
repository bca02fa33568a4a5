// The families' block options, read after the counts and the RoPE: the embedding,
// residual and logit factors (Gemma, Granite), the attention scale, Mistral 3's
// temperature, soft-caps, sliding windows (Gemma) and Llama 4's chunked attention. Keys
// are optional in the file (Granite's logit_scale aside); the family (runtime/model/arch)
// supplies what llama.cpp's loader assumes when a converter left a key out, so files from
// every converter version give the same model.
#include "runtime/model/hparams_keys.h"

#include <cmath>
#include <type_traits>
#include <utility>
#include <variant>

namespace pshard {
namespace {

Status read_softcaps(const HParamKeys& k, ModelHParams& hp) {
  hp.attn_softcap = hp.family->attn_softcap;
  hp.final_softcap = hp.family->final_softcap;
  if (hp.family->attn_softcap > 0.0f)
    PSHARD_RETURN_IF_ERROR(k.optional("attn_logit_softcapping", &hp.attn_softcap));
  PSHARD_RETURN_IF_ERROR(k.optional("final_logit_softcapping", &hp.final_softcap));
  if (hp.attn_softcap < 0.0f || hp.final_softcap < 0.0f || !std::isfinite(hp.attn_softcap) ||
      !std::isfinite(hp.final_softcap))
    return invalid_format(k.key("attn_logit_softcapping") + " and " +
                          k.key("final_logit_softcapping") + " must be finite and not negative");
  return Status::ok_status();
}

Status read_attention_scale(const HParamKeys& k, ModelHParams& hp) {
  const int64_t wide = hp.family->width_scaled_attention_layers;
  if (wide > 0 && hp.n_layer == wide) // query_pre_attn_scalar = n_embd / n_head (27B)
    hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head));
  PSHARD_RETURN_IF_ERROR(k.optional("attention.scale", &hp.attn_scale));
  if (!(hp.attn_scale >= 0.0f) || !std::isfinite(hp.attn_scale))
    return invalid_format(k.key("attention.scale") + " must be a positive number");
  return Status::ok_status();
}

} // namespace

Result<std::vector<bool>> layer_flags(const gguf::Array& flags, const std::string& key,
                                      int64_t n_layer) {
  if (static_cast<int64_t>(flags.items.size()) != n_layer)
    return invalid_format(key + " has " + std::to_string(flags.items.size()) + " entries for " +
                          std::to_string(n_layer) + " layers");
  std::vector<bool> out(flags.items.size(), false);
  for (size_t il = 0; il < flags.items.size(); ++il) {
    bool set = false, ok = false;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_arithmetic_v<T>) {
            set = v != T{};
            ok = true;
          }
        },
        flags.items[il].v);
    if (!ok)
      return invalid_format(key + " entry " + std::to_string(il) + " is not a flag");
    out[il] = set;
  }
  return out;
}

namespace {

// Which layers are local: every period-th is global, or the file's per-layer list.
Status read_local_layers(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams& hp) {
  const std::string key = k.key("attention.sliding_window_pattern");
  int64_t period = hp.family->sliding.period;
  const gguf::Array* flags = nullptr;
  if (f.find(key)) { // per-layer flags, or a period
    if (Result<const gguf::Array*> array = f.get_array(key); array.ok())
      flags = *array;
    else
      PSHARD_RETURN_IF_ERROR(k.optional("attention.sliding_window_pattern", &period));
  }
  hp.local_layers.assign(static_cast<size_t>(hp.n_layer), false);
  if (flags) { // llama.cpp's per-layer form: true where the layer is local
    PSHARD_ASSIGN_OR_RETURN(hp.local_layers, layer_flags(*flags, key, hp.n_layer));
    return Status::ok_status();
  }
  if (period <= 0)
    return invalid_format(key + " must be positive, got " + std::to_string(period));
  for (int64_t il = 0; il < hp.n_layer; ++il)
    hp.local_layers[static_cast<size_t>(il)] =
        hp.family->sliding.global_first ? il % period != 0 : il % period < period - 1;
  return Status::ok_status();
}

Status read_sliding_window(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams& hp) {
  const SlidingWindow& fam = hp.family->sliding;
  if (fam.period == 0) {
    if (k.has("attention.sliding_window") && !fam.ignore_key)
      return unsupported(k.key("attention.sliding_window") + " is set, but pshard runs " +
                         std::string(hp.family->name) +
                         " models with full attention; is general.architecture right?");
    return Status::ok_status();
  }
  hp.sliding_window = fam.default_window;
  PSHARD_RETURN_IF_ERROR(k.optional("attention.sliding_window", &hp.sliding_window));
  if (hp.sliding_window <= 0) { // Gemma 3 converted without windows: every layer global
    hp.sliding_window = 0;
    return Status::ok_status();
  }
  PSHARD_RETURN_IF_ERROR(read_local_layers(f, k, hp));
  hp.local_rope_base = fam.local_rope_base;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.freq_base_swa", &hp.local_rope_base));
  if (!(hp.local_rope_base >= 0.0f) || !std::isfinite(hp.local_rope_base))
    return invalid_format(k.key("rope.freq_base_swa") + " must be a positive number");
  return Status::ok_status();
}

// Granite's multipliers; logit_scale is required (llama.cpp's loader needs it too).
Status read_multipliers(const HParamKeys& k, ModelHParams& hp) {
  if (!hp.family->multiplier_keys)
    return Status::ok_status();
  float logit_scale = 0.0f;
  PSHARD_RETURN_IF_ERROR(k.required("logit_scale", &logit_scale));
  PSHARD_RETURN_IF_ERROR(k.optional("embedding_scale", &hp.embed_scale));
  PSHARD_RETURN_IF_ERROR(k.optional("residual_scale", &hp.residual_scale));
  for (const auto& [key, v] :
       {std::pair{"logit_scale", logit_scale}, std::pair{"embedding_scale", hp.embed_scale},
        std::pair{"residual_scale", hp.residual_scale}})
    if (!(v > 0.0f) || !std::isfinite(v))
      return invalid_format(k.key(key) + " must be a positive number, got " + std::to_string(v));
  hp.logit_scale = 1.0f / logit_scale;
  return Status::ok_status();
}

// Mistral 3: the attention temperature, stepping every original context, and YaRN's
// magnitude divided by its mscale over all dimensions (yarn_log_multiplier).
Status read_attn_temperature(const HParamKeys& k, ModelHParams& hp) {
  if (!hp.family->attn_temperature)
    return Status::ok_status();
  PSHARD_RETURN_IF_ERROR(k.optional("attention.temperature_scale", &hp.attn_temp_scale));
  if (!(hp.attn_temp_scale >= 0.0f) || !std::isfinite(hp.attn_temp_scale))
    return invalid_format(k.key("attention.temperature_scale") + " must not be negative");
  hp.attn_temp_length = hp.rope_ctx_orig > 0 ? hp.rope_ctx_orig : hp.n_ctx_train;
  float log_mul = 0.0f;
  PSHARD_RETURN_IF_ERROR(k.optional("rope.scaling.yarn_log_multiplier", &log_mul));
  if (log_mul != 0.0f && hp.rope_scaling == RopeScaling::kYarn) {
    const float factor = 1.0f / hp.rope_freq_scale;
    auto mscale = [&](float m) {
      return factor <= 1.0f ? 1.0f : 0.1f * m * std::log(factor) + 1.0f;
    };
    hp.yarn_attn_factor = mscale(1.0f) / mscale(log_mul);
  }
  return Status::ok_status();
}

// Llama 4's attention, with llama.cpp's fixed values (its converter writes no keys for
// them): chunks on the rotating layers, the temperature on the others, the q/k norm.
Status read_llama4_attention(const HParamKeys& k, ModelHParams& hp) {
  constexpr int64_t kChunk = 8192, kTempLength = 8192;
  constexpr float kTempScale = 0.1f;
  constexpr int64_t kMaverickExperts = 128; // its q and k are not normalised
  hp.rope_qk_norm = hp.n_expert != kMaverickExperts;
  int64_t window = -1;
  PSHARD_RETURN_IF_ERROR(k.optional("attention.sliding_window", &window));
  if (window == 0) { // MobileLLM-R1: full attention, only the last layer unrotated
    hp.nope_period = static_cast<int>(hp.n_layer);
    return Status::ok_status();
  }
  hp.sliding_window = kChunk;
  PSHARD_RETURN_IF_ERROR(k.optional("attention.chunk_size", &hp.sliding_window));
  if (hp.sliding_window <= 0)
    return invalid_format(k.key("attention.chunk_size") + " must be positive, got " +
                          std::to_string(hp.sliding_window));
  hp.chunked_window = true;
  hp.local_layers.assign(static_cast<size_t>(hp.n_layer), false);
  for (int64_t il = 0; il < hp.n_layer; ++il)
    hp.local_layers[static_cast<size_t>(il)] = hp.uses_rope(il);
  hp.attn_temp_scale = kTempScale;
  hp.attn_temp_length = kTempLength;
  hp.temp_on_unrotated_only = true;
  return Status::ok_status();
}

} // namespace

Status read_block_options(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams& hp) {
  if (hp.family->scale_embeddings)
    hp.embed_scale = std::sqrt(static_cast<float>(hp.n_embd));
  PSHARD_RETURN_IF_ERROR(read_multipliers(k, hp));
  PSHARD_RETURN_IF_ERROR(read_attn_temperature(k, hp));
  PSHARD_RETURN_IF_ERROR(read_latent_scale(k, hp));
  PSHARD_RETURN_IF_ERROR(read_softcaps(k, hp));
  PSHARD_RETURN_IF_ERROR(read_attention_scale(k, hp));
  hp.nope_period = hp.family->nope_period;
  if (hp.family->llama4_attention)
    return read_llama4_attention(k, hp);
  return read_sliding_window(f, k, hp);
}

} // namespace pshard
