// Private to the hyperparameter reader: typed reads of `{arch}.<key>` metadata with
// errors that name the full key, and the RoPE part of the reader (hparams_rope.cpp).
#pragma once

#include "runtime/gguf/gguf_file.h"
#include "runtime/model/hparam_overrides.h"
#include "runtime/model/hparams.h"

#include <set>
#include <string>
#include <vector>

namespace pshard {

// `overrides` (may be null) stand in for the file's keys of the same suffix.
class HParamKeys {
public:
  HParamKeys(const gguf::GgufFile& file, const ArchFamily& family,
             const HParamOverrides* overrides = nullptr)
      : file_(file), family_(family), prefix_(std::string(family.name) + "."),
        overrides_(overrides) {}

  // Whether an override of `suffix` was asked for (--override-kv must name a key the
  // model reads).
  bool consulted(const std::string& suffix) const { return consulted_.count(suffix) > 0; }

  std::string key(const std::string& suffix) const { return prefix_ + suffix; }
  bool has(const std::string& suffix) const {
    return overridden(suffix) != nullptr || file_.find(key(suffix)) != nullptr;
  }
  const gguf::GgufFile& file() const { return file_; }

  // Leave *out unchanged when the key is absent.
  Status optional(const std::string& suffix, int64_t* out) const;
  Status optional(const std::string& suffix, float* out) const;
  Status optional(const std::string& suffix, bool* out) const;
  Status optional(const std::string& suffix, std::string* out) const;
  Status required(const std::string& suffix, int64_t* out) const;
  Status required(const std::string& suffix, float* out) const;

private:
  using Override = std::variant<int64_t, double, std::string>;
  const Override* overridden(const std::string& suffix) const {
    consulted_.insert(suffix);
    if (!overrides_)
      return nullptr;
    const auto it = overrides_->values.find(suffix);
    return it == overrides_->values.end() ? nullptr : &it->second;
  }

  const gguf::GgufFile& file_;
  const ArchFamily& family_;
  std::string prefix_;
  const HParamOverrides* overrides_;
  mutable std::set<std::string> consulted_;
};

// rope.freq_base, rope.dimension_count, rope.dimension_sections (M-RoPE) and rope.scaling.* (none,
// linear, llama3, yarn).
Status read_rope(const HParamKeys& keys, ModelHParams& hp);

// Multi-head latent attention (hparams_mla.cpp): the ranks and head widths, read in place of
// key_length/value_length; then, after RoPE, their checks and the scores' scale.
Status read_latent_dims(const HParamKeys& keys, ModelHParams& hp);
Status read_latent_scale(const HParamKeys& keys, ModelHParams& hp);

// Per-layer flags (an array of n_layer numbers or booleans, nonzero: set) of metadata `key`.
Result<std::vector<bool>> layer_flags(const gguf::Array& flags, const std::string& key,
                                      int64_t n_layer);

// Gated DeltaNet (hparams_delta_net.cpp; families with gated_delta_net): the ssm.* sizes and
// which layers recur; needs the attention's counts and eps.
Status read_delta_net(const HParamKeys& keys, ModelHParams& hp);

// The block options of hparams_block_options.cpp (scales, soft-caps, Mistral 3's
// temperature, sliding windows and their RoPE); needs hp's counts and RoPE.
Status read_block_options(const gguf::GgufFile& file, const HParamKeys& keys, ModelHParams& hp);

} // namespace pshard
