// --cache-type-k / --cache-type-v (llama.cpp's -ctk / -ctv): the KV cache's element types
// by name, spelled and checked the same in pshard-run and pshard-server. Header-only and
// CLI11-dependent: include it from the mains and what turns their options into params.
//
//   cli::add_kv_type_options(app, o.cache_type_k, o.cache_type_v);
//   cp.kv_type_k = cli::kv_type_named(o.cache_type_k);  // "" -> PSHARD_KV_DEFAULT
#pragma once

#include "pshard/pshard.h"

#include <CLI/CLI.hpp>
#include <string>

namespace pshard::cli {

inline void add_kv_type_options(CLI::App& app, std::string& k, std::string& v) {
  const auto names = CLI::IsMember({"f32", "f16", "q8_0"});
  app.add_option("--cache-type-k", k,
                 "KV cache type of K (-ctk): f16 (default without a schedule), q8_0, f32; with "
                 "a schedule, its --kv-type")
      ->check(names);
  app.add_option("--cache-type-v", v, "KV cache type of V (-ctv), as --cache-type-k")->check(names);
}

// A name add_kv_type_options admitted ("" for none given).
inline pshard_kv_type kv_type_named(const std::string& name) {
  if (name.empty())
    return PSHARD_KV_DEFAULT;
  return name == "f32" ? PSHARD_KV_F32 : name == "q8_0" ? PSHARD_KV_Q8_0 : PSHARD_KV_F16;
}

} // namespace pshard::cli
