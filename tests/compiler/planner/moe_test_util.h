// Helpers the MoE planner tests share (routing profiles, hot experts).
#pragma once

#include "pshard/Planner/ModelGraph.h"
#include "runtime/model/routing_profile.h"

#include <gtest/gtest.h>

namespace pshard::planner::testing {

// The graph's first MoE sub-layer (a test failure, and the first sub-layer, when none).
inline const SubLayerInfo& first_moe(const ModelGraph& g) {
  for (const SubLayerInfo& s : g.sublayers)
    if (s.kind == SubLayerKind::kMoe)
      return s;
  ADD_FAILURE() << "no MoE sub-layer";
  return g.sublayers.front();
}

// Qwen3-30B-A3B's shape (issue 13's MoE figures): 48 layers, 128 experts, top 8.
inline ModelHParams qwen3_30b_a3b() {
  ModelHParams hp;
  hp.n_vocab = 151936;
  hp.n_embd = 2048;
  hp.n_layer = 48;
  hp.n_head = 32;
  hp.n_head_kv = 4;
  hp.head_dim = 128;
  hp.n_ff = hp.n_ff_exp = 768;
  hp.n_expert = 128;
  hp.n_expert_used = 8;
  return hp;
}

// Each layer's first `hot` experts share `hot_slots` of every token's k slots; the rest
// spread evenly.
inline RoutingProfile skewed_routing(const ModelHParams& hp, int64_t hot, int64_t hot_slots) {
  RoutingProfile r = *RoutingProfile::empty_for(hp, "skewed", "test");
  const uint64_t tokens = 1024;
  for (RoutingLayer& l : r.layers) {
    l.tokens = tokens;
    uint64_t left = tokens * static_cast<uint64_t>(hp.n_expert_used);
    for (int64_t e = 0; e < hot; ++e)
      left -= l.counts[static_cast<size_t>(e)] = tokens * hot_slots / hot;
    for (uint64_t i = 0; i < left; ++i)
      ++l.counts[static_cast<size_t>(hot + static_cast<int64_t>(i) % (hp.n_expert - hot))];
  }
  EXPECT_TRUE(r.validate().ok()) << r.validate().to_string();
  return r;
}

} // namespace pshard::planner::testing
