// Shared by the vision planner's files (not a public header).
#pragma once

#include "pshard/Planner/Estimator.h"
#include "pshard/Planner/VisionGraph.h"

namespace pshard::planner {

// Roofline of every vision sub-layer for an image of `patches`, with the tiled attention's
// query blocks of `tile` (0: untiled, one block) priced as launches.
SubLayerCosts vision_costs(const VisionGraph& g, const MachineModel& machine, int64_t patches,
                           int64_t tile, int threads);

} // namespace pshard::planner
