// Records the experts a host forward pass routes each token to, into a RoutingProfile
// (pshard-profile --routing). A CpuSession given one calls record() in every MoE
// sub-layer with the router's logits, before the dispatch uses them; the recorder
// routes a copy exactly as the dispatch does (moe_routes: probabilities, top k, ties to
// the lower index), so what it counts is what ran.
//
//   PSHARD_ASSIGN_OR_RETURN(RoutingProfile r, RoutingProfile::empty_for(hp, name, arch));
//   RoutingRecorder recorder(&r);
//   session->set_routing_recorder(&recorder);
//   session->decode(tokens);          // every MoE layer's choices land in r
#pragma once

#include "runtime/device/ops.h"
#include "runtime/model/routing_profile.h"

#include <vector>

namespace pshard {

class RoutingRecorder {
public:
  explicit RoutingRecorder(RoutingProfile* profile) : profile_(profile) {}
  // `logits`: n_tokens rows of n_expert router logits, in host memory (not modified),
  // chosen from as `gating` says (its selection bias in host memory).
  void record(int64_t layer, const float* logits, int64_t n_tokens, const MoeGating& gating);
  // The first error record() met (a layer the profile lacks), or OK.
  const Status& status() const { return status_; }

private:
  RoutingProfile* profile_;
  std::vector<float> copy_;
  std::vector<std::vector<int64_t>> per_token_;
  Status status_;
};

} // namespace pshard
