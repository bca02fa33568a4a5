// llama.cpp's RoPE flags (--rope-scaling, --rope-scale, --rope-freq-base,
// --rope-freq-scale, --yarn-orig-ctx, --yarn-ext-factor, --yarn-attn-factor,
// --yarn-beta-fast, --yarn-beta-slow), spelled the same in pshard-run and pshard-server:
// read as the model file's rope.* keys would be (runtime/model/hparam_overrides.h).
// Header-only and CLI11-dependent: include it from the mains and what turns their options
// into params.
//
//   cli::add_rope_options(app, o.rope);
//   cli::set_rope_params(mp, o.rope);   // pshard_model_params
#pragma once

#include "runtime/model/hparam_overrides.h"

#include <CLI/CLI.hpp>

namespace pshard::cli {

inline void add_rope_options(CLI::App& app, RopeFlags& f) {
  app.add_option("--rope-scaling", f.scaling,
                 "RoPE scaling: none, linear or yarn (default: the model file's); with "
                 "--rope-scale, a context longer than the file's (Qwen3: yarn, 4, "
                 "--yarn-orig-ctx 32768 for 131072)")
      ->check(CLI::IsMember({"none", "linear", "yarn"}));
  auto* scale =
      app.add_option("--rope-scale", f.scale, "RoPE context scaling factor N (default: the file's)")
          ->check(CLI::PositiveNumber);
  app.add_option("--rope-freq-scale", f.freq_scale, "RoPE frequency scaling, 1/N (--rope-scale)")
      ->check(CLI::PositiveNumber)
      ->excludes(scale);
  app.add_option("--rope-freq-base", f.freq_base, "RoPE base frequency (default: the file's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--yarn-orig-ctx", f.yarn_orig_ctx,
                 "YaRN: the context the scaling extends (default: the file's, else its training "
                 "context)")
      ->check(CLI::PositiveNumber);
  app.add_option("--yarn-ext-factor", f.yarn_ext_factor,
                 "YaRN: extrapolation mix (default: the file's, else 1 with YaRN)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--yarn-attn-factor", f.yarn_attn_factor,
                 "YaRN: attention magnitude (default: the file's, else 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--yarn-beta-fast", f.yarn_beta_fast,
                 "YaRN: low correction dimension (default: the file's, else 32)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--yarn-beta-slow", f.yarn_beta_slow,
                 "YaRN: high correction dimension (default: the file's, else 1)")
      ->check(CLI::NonNegativeNumber);
}

// Into pshard_model_params (the C API's RoPE fields); `f` must outlive the load.
template <typename ModelParams> void set_rope_params(ModelParams& mp, const RopeFlags& f) {
  mp.rope_scaling_type = f.scaling.empty() ? nullptr : f.scaling.c_str();
  mp.rope_freq_base = static_cast<float>(f.freq_base);
  mp.rope_freq_scale = static_cast<float>(f.scale != 0 ? 1.0 / f.scale : f.freq_scale);
  mp.yarn_orig_ctx = static_cast<int32_t>(f.yarn_orig_ctx);
  mp.yarn_ext_factor = static_cast<float>(f.yarn_ext_factor);
  mp.yarn_attn_factor = static_cast<float>(f.yarn_attn_factor);
  mp.yarn_beta_fast = static_cast<float>(f.yarn_beta_fast);
  mp.yarn_beta_slow = static_cast<float>(f.yarn_beta_slow);
}

} // namespace pshard::cli
