// llama.cpp's --override-kv KEY=TYPE:VALUE (repeatable), spelled the same in pshard-run
// and pshard-server: a value standing in for the model file's {arch}.* or tokenizer key
// while the model loads (runtime/model/hparam_overrides.h), e.g.
// qwen3moe.expert_used_count=int:4 to route each token to fewer experts. Header-only and
// CLI11-dependent.
//
//   cli::add_override_kv_option(app, o.override_kv);   // cli::load_model passes them on
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pshard::cli {

inline void add_override_kv_option(CLI::App& app, std::vector<std::string>& specs) {
  app.add_option("--override-kv", specs,
                 "KEY=TYPE:VALUE (TYPE int, float, bool or str; repeat for more): read in "
                 "place of the model file's KEY, one of its {arch}.* hyperparameters (e.g. "
                 "qwen3moe.expert_used_count=int:4; with a schedule only rope.* keys) or the "
                 "tokenizer's flags, token ids and pre-tokenizer (e.g. "
                 "tokenizer.ggml.add_bos_token=bool:false)")
      ->take_all();
}

} // namespace pshard::cli
