// Helpers the MoE planner tests share (routing profiles, hot experts).
#pragma once

#include "pshard/Planner/ModelGraph.h"

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

} // namespace pshard::planner::testing
