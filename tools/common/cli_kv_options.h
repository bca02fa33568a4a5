// --cache-type-k / --cache-type-v (llama.cpp's -ctk / -ctv): the KV cache's element types
// by name, spelled and checked the same in pshard-run and pshard-server. Header-only and
// CLI11-dependent: include it from the mains and what turns their options into params.
//
//   cli::add_kv_type_options(app, o.cache_type_k, o.cache_type_v);
//   if (auto t = cli::kv_type_named(o.cache_type_k)) ...   // nullopt: none given
#pragma once

#include "runtime/tensor/tensor_type.h"

#include <CLI/CLI.hpp>
#include <optional>
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

// A name add_kv_type_options admitted; nullopt for "" (none given). The C API's
// pshard_kv_type numbers the types as TensorType does.
inline std::optional<TensorType> kv_type_named(const std::string& name) {
  if (name.empty())
    return std::nullopt;
  return name == "f32" ? TensorType::kF32 : name == "q8_0" ? TensorType::kQ8_0 : TensorType::kF16;
}

// As the C API takes it: PSHARD_KV_DEFAULT (-1) for none given.
template <typename KvEnum> KvEnum kv_type_param(const std::string& name) {
  const std::optional<TensorType> t = kv_type_named(name);
  return static_cast<KvEnum>(t ? static_cast<int>(*t) : -1);
}

} // namespace pshard::cli
