// Values that stand in for a file's `{arch}.<key>` metadata while its hyperparameters are
// read: llama.cpp's RoPE flags (--rope-scaling, --rope-scale, --rope-freq-base,
// --rope-freq-scale, --yarn-*) as the file's rope.* keys would carry them, so a file given
// the flags runs as a file with the keys, values derived from them (Mistral 3's attention
// temperature) included; keys no flag gives (DeepSeek's YaRN log multiplier) stay the
// file's. The file, and so its fingerprint, stays as it is.
// Qwen3's documented 131072 positions: YaRN, factor 4, over 32768.
//
//   RopeFlags f;
//   f.scaling = "yarn";
//   f.scale = 4;
//   f.yarn_orig_ctx = 32768;
//   PSHARD_ASSIGN_OR_RETURN(HParamOverrides o, rope_overrides(f));
//   PSHARD_ASSIGN_OR_RETURN(auto model, Model::load(path, gguf::OpenMode::kMapData, o));
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_value.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace pshard {

using HParamValue = std::variant<int64_t, double, std::string>; // a bool: 0 or 1

struct HParamOverrides {
  // By key suffix ("rope.scaling.factor"): an integer, a number or a string.
  std::map<std::string, HParamValue> values;
  // llama.cpp's --override-kv, by whole key ("qwen3moe.expert_used_count") until the
  // architecture is known: read_model_hparams takes those of the model's {arch}.* keys
  // and refuses, naming it, one of another architecture or one the model never reads.
  std::map<std::string, HParamValue> by_key;
  // --override-kv's tokenizer keys (runtime/tokenizer/tokenizer_keys.h), typed as the
  // tokenizer reads them: the loader sets them on the opened file (GgufFile::
  // override_value), so the tokenizer built from it reads them; plans do not depend on them.
  std::map<std::string, gguf::Value> file_values;
  bool empty() const { return values.empty() && by_key.empty() && file_values.empty(); }
};

// Parses llama.cpp's --override-kv KEY=TYPE:VALUE (TYPE int, float, bool or str) into
// o.by_key, or a tokenizer key into o.file_values (bools as bool, token ids as int, the
// pre-tokenizer's name as str); kInvalidArgument naming the spec and what is wrong with it
// (a tokenizer key it cannot take, or of another type, among them).
Status add_kv_override(HParamOverrides& o, std::string_view spec);

// With a schedule: only rope.* keys and the tokenizer's may be overridden, since the
// plans were made for the file's other hyperparameters; kInvalidArgument naming the key.
Status check_overrides_with_schedule(const HParamOverrides& o);

// Adds each --override-kv spec to `o` (the RoPE flags' overrides), then, for a model that
// runs under a schedule, checks them against it: as pshard_model_load and pshard-run's
// image prompts take them.
Status add_kv_overrides(HParamOverrides& o, std::span<const std::string> kv_specs, bool scheduled);

// llama.cpp's RoPE flags; unset (empty, 0, negative for the yarn factors): the file's.
struct RopeFlags {
  std::string scaling;   // --rope-scaling: none, linear or yarn
  double scale = 0;      // --rope-scale N: the scaling factor
  double freq_scale = 0; // --rope-freq-scale F: 1 / the factor
  double freq_base = 0;  // --rope-freq-base
  int64_t yarn_orig_ctx = 0;
  double yarn_ext_factor = -1, yarn_attn_factor = -1, yarn_beta_fast = -1, yarn_beta_slow = -1;
};

// kInvalidArgument naming the flag for a value no file's key could hold (an unknown
// scaling type, a factor that is not positive, --rope-scale with --rope-freq-scale).
Result<HParamOverrides> rope_overrides(const RopeFlags& flags);

} // namespace pshard
