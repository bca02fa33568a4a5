// A routing profile onto the model graph (ModelGraph.h: apply_routing_profile).
#include "pshard/Planner/ModelGraph.h"

#include "runtime/model/routing_profile.h"

namespace pshard::planner {

Status apply_routing_profile(ModelGraph& graph, const RoutingProfile& routing) {
  PSHARD_RETURN_IF_ERROR(routing.validate());
  const ModelHParams& hp = graph.hparams;
  const std::string fix = "; take a routing profile of this model with pshard-profile --routing";
  if (!hp.is_moe())
    return invalid_argument("--routing needs a mixture-of-experts model; '" + graph.name +
                            "' is dense");
  if (routing.n_expert != hp.n_expert || routing.n_expert_used != hp.n_expert_used)
    return Status(StatusCode::kModelMismatch,
                  "the routing profile (of '" + routing.model + "') has " +
                      std::to_string(routing.n_expert_used) + " of " +
                      std::to_string(routing.n_expert) + " experts per token, the model " +
                      std::to_string(hp.n_expert_used) + " of " + std::to_string(hp.n_expert) +
                      fix);
  for (const RoutingLayer& l : routing.layers)
    if (l.layer >= hp.n_layer)
      return Status(StatusCode::kModelMismatch,
                    "the routing profile (of '" + routing.model + "') has layer " +
                        std::to_string(l.layer) + ", the model " + std::to_string(hp.n_layer) +
                        " layers" + fix);
  for (SubLayerInfo& s : graph.sublayers) {
    if (s.kind != SubLayerKind::kMoe)
      continue;
    if (!routing.find(s.layer))
      return Status(StatusCode::kModelMismatch, "the routing profile (of '" + routing.model +
                                                    "') has no layer " + std::to_string(s.layer) +
                                                    fix);
    s.expert_prob = routing.probabilities(s.layer);
  }
  return Status::ok_status();
}

} // namespace pshard::planner
