// pshard-profile --routing: runs a MoE model on the CPU over a text and writes which
// experts each layer routed its tokens to (runtime/model/routing_profile.h), for
// pshard-compile --routing.
//
//   pshard-profile --routing -m qwen3-30b-a3b.gguf -f wiki.txt -o qwen3-30b.routing.json
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <iosfwd>
#include <string>

namespace pshard::profiling {

struct RoutingOptions {
  std::string model_path;
  std::string text_path;
  std::string output; // the JSON file to write
  int64_t n_ctx = 512; // the text is read in windows of this many tokens, each from position 0
  int64_t max_tokens = 0; // 0: the whole text
  int32_t threads = 0;
};

// Writes the profile and a short summary per layer to `report` (tokens, the share of the
// busiest experts).
Status run_routing_profile(const RoutingOptions& options, std::ostream& report);

} // namespace pshard::profiling
