// llama.cpp's --lora FNAME and --lora-scaled FNAME SCALE (each repeatable), spelled the
// same in pshard-run and pshard-server: LoRA adapters merged into the model's weights at
// load (runtime/model/lora_adapter.h). Header-only and CLI11-dependent.
//
//   cli::add_lora_options(app, o.lora, o.lora_scaled);   // cli::load_model passes them on
#pragma once

#include "runtime/core/status.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>
#include <vector>

namespace pshard::cli {

inline void add_lora_options(CLI::App& app, std::vector<std::string>& lora,
                             std::vector<std::string>& lora_scaled) {
  app.add_option("--lora", lora,
                 "a LoRA adapter (GGUF) merged into the weights at load, scale 1; repeatable")
      ->take_all();
  app.add_option("--lora-scaled", lora_scaled,
                 "FNAME SCALE: a LoRA adapter at that scale; repeatable")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// The C API's arrays; `paths` point into the options, which must outlive them.
struct LoraParams {
  std::vector<const char*> paths;
  std::vector<float> scales;
  size_t size() const { return paths.size(); }
};

inline Result<LoraParams> lora_params(const std::vector<std::string>& lora,
                                      const std::vector<std::string>& lora_scaled) {
  LoraParams p;
  for (const std::string& path : lora) {
    p.paths.push_back(path.c_str());
    p.scales.push_back(1.0f);
  }
  for (size_t i = 0; i + 1 < lora_scaled.size(); i += 2) {
    char* end = nullptr;
    const float scale = std::strtof(lora_scaled[i + 1].c_str(), &end);
    if (end == lora_scaled[i + 1].c_str() || *end != '\0' || !std::isfinite(scale))
      return invalid_argument("--lora-scaled " + lora_scaled[i] + " " + lora_scaled[i + 1] +
                              ": the scale is not a number");
    p.paths.push_back(lora_scaled[i].c_str());
    p.scales.push_back(scale);
  }
  return p;
}

} // namespace pshard::cli
