// The schedule emitter: a PlanGrid (with its model graph) as a *.pshard FlatBuffer
// (schemas/schedule.fbs). The bytes are re-read with the runtime's own loader before
// anything is written, so the compiler never ships a file the runtime would refuse. A
// VLM's vision plans (schema 1.4) travel in Schedule.vision.
//
//   PSHARD_RETURN_IF_ERROR(planner::write_schedule_file(graph, grid, "model.pshard",
//                                                      "pshard-compile 0.1.0"));
#pragma once

#include "pshard/Planner/ModelGraph.h"
#include "pshard/Planner/Plan.h"
#include "pshard/Planner/VisionPlanner.h"
#include "runtime/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard::planner {

// `vision`: a VLM's vision phase (pshard-compile --mmproj), planned over grid.budgets;
// null for a language model alone.
Result<std::vector<uint8_t>> serialize_schedule(const ModelGraph& graph, const PlanGrid& grid,
                                                const std::string& created_by,
                                                const VisionPhasePlans* vision = nullptr);

// Atomic: a temporary file beside `path`, then rename.
Status write_schedule_file(const ModelGraph& graph, const PlanGrid& grid, const std::string& path,
                           const std::string& created_by, const VisionPhasePlans* vision = nullptr);

} // namespace pshard::planner
