// A routing profile: how often each routed expert of each MoE layer was chosen while a
// model read a text (`pshard-profile --routing`). The planner reads it (`pshard-compile
// --routing`) to expect the experts a pass touches from the measured frequencies instead
// of uniform routing. Without one, every expert is taken as equally likely.
//
//   RoutingProfile r = RoutingProfile::empty_for(hp, "my-model");
//   r.add(layer, expert_ids_of_one_token);         // n_expert_used ids
//   PSHARD_RETURN_IF_ERROR(r.save("routing.json"));
//   PSHARD_ASSIGN_OR_RETURN(RoutingProfile back, RoutingProfile::load("routing.json"));
//   std::vector<double> p = back.probabilities(layer); // per token, sums to n_expert_used
//
// The file is JSON, small and readable:
//   {"format": "pshard-routing", "version": 1, "model": "...", "architecture": "qwen3moe",
//    "n_expert": 128, "n_expert_used": 8, "text_tokens": 4096,
//    "layers": [{"layer": 0, "tokens": 4096, "counts": [31, 0, 402, ...]}, ...]}
// `tokens` counts the tokens routed through the layer; each token adds n_expert_used to
// the layer's counts, so the counts sum to tokens × n_expert_used.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

struct ModelHParams;

struct RoutingLayer {
  int64_t layer = 0;
  uint64_t tokens = 0;
  std::vector<uint64_t> counts; // n_expert entries
};

struct RoutingProfile {
  std::string model;        // general.name of the model profiled
  std::string architecture; // general.architecture
  int64_t n_expert = 0, n_expert_used = 0;
  uint64_t text_tokens = 0; // tokens of the text read
  std::vector<RoutingLayer> layers; // every MoE layer, ascending

  // Zero counts for every layer of a MoE model (an error for a dense one).
  static Result<RoutingProfile> empty_for(const ModelHParams& hp, std::string model,
                                          std::string architecture);
  static Result<RoutingProfile> load(const std::string& path);
  Status save(const std::string& path) const; // to a temporary name, then renamed

  // Records one token's routed experts in `layer` (each id once, n_expert_used of them).
  Status add(int64_t layer, std::span<const int64_t> experts);
  // The layer's entry, or null.
  const RoutingLayer* find(int64_t layer) const;
  // Per-token probability of each expert being chosen in `layer` (sums to n_expert_used);
  // uniform n_expert_used / n_expert for a layer that saw no tokens.
  std::vector<double> probabilities(int64_t layer) const;
  // Checks the counts' invariants (sizes, sums); load() runs it.
  Status validate() const;
};

} // namespace pshard
