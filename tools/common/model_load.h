// The model as pshard-run and pshard-server load it from their options (the same flags,
// the same field names in RunOptions and ServerOptions): -m, -s, --no-mmap, --mmproj,
// --image-min/max-tokens, the RoPE flags, --override-kv and the LoRA adapters; and a
// draft model (-md), its weights only. Header-only, as the options structs are the
// tools' own.
//
//   PSHARD_ASSIGN_OR_RETURN(ModelHandle model, cli::load_model(o));
//   PSHARD_ASSIGN_OR_RETURN(ModelHandle draft, cli::load_draft_model(path, o.no_mmap));
#pragma once

#include "tools/common/capi_call.h"
#include "tools/common/cli_lora_options.h"
#include "tools/common/cli_override_kv.h"
#include "tools/common/cli_rope_options.h"

#include <string>

namespace pshard::cli {

template <typename Options> Result<ModelHandle> load_model(const Options& o) {
  pshard_model_params mp = pshard_model_default_params();
  mp.schedule_path = o.schedule_path.empty() ? nullptr : o.schedule_path.c_str();
  mp.use_mmap = !o.no_mmap;
  mp.mmproj_path = o.mmproj_path.empty() ? nullptr : o.mmproj_path.c_str();
  mp.image_min_tokens = static_cast<int32_t>(o.image_min_tokens);
  mp.image_max_tokens = static_cast<int32_t>(o.image_max_tokens);
  set_rope_params(mp, o.rope);
  const std::vector<const char*> overrides = c_strings(o.override_kv);
  mp.kv_overrides = overrides.data();
  mp.n_kv_overrides = overrides.size();
  PSHARD_ASSIGN_OR_RETURN(const LoraParams loras, lora_params(o.lora, o.lora_scaled));
  mp.lora_paths = loras.paths.data();
  mp.lora_scales = loras.scales.data();
  mp.n_lora = loras.size();
  pshard_model* model = nullptr;
  PSHARD_C_CALL(pshard_model_load(o.model_path.c_str(), &mp, &model));
  return ModelHandle(model);
}

inline Result<ModelHandle> load_draft_model(const std::string& path, bool no_mmap) {
  pshard_model_params mp = pshard_model_default_params();
  mp.use_mmap = !no_mmap;
  pshard_model* model = nullptr;
  PSHARD_C_CALL(pshard_model_load(path.c_str(), &mp, &model));
  return ModelHandle(model);
}

} // namespace pshard::cli
