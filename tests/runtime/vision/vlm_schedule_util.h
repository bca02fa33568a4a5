// Tests' schedules for a VLM (a qwen2vl language model and its projector), planned as
// pshard-compile --mmproj plans them, for tests of the vision phase and its interfaces.
//
//   auto bytes = compile_vlm_schedule(model, proj, machine, "64,256");
//   auto s = Schedule::load_bytes(*bytes);
#pragma once

#include "pshard/Planner/Planner.h"
#include "pshard/Planner/VisionPlanner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/schedule/schedule_file.h"

#include <string>
#include <vector>

namespace pshard::testing {

// Budgets from the language minimum to everything resident, with steps the size of the
// vision tower's weights and activations at the largest tier, so that vision plans
// stream, keep a prefix resident and go all-resident. Tiers 1 and 16, context 512.
inline Result<std::vector<uint8_t>> compile_vlm_schedule(const std::string& model,
                                                         const std::string& proj,
                                                         const planner::FixedMachineParams& machine,
                                                         const std::string& image_tiers) {
  PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(model, gguf::OpenMode::kMetadataOnly));
  PSHARD_ASSIGN_OR_RETURN(planner::ModelGraph graph, planner::build_model_graph(*file));
  PSHARD_ASSIGN_OR_RETURN(auto pfile, gguf::GgufFile::open(proj, gguf::OpenMode::kMetadataOnly));
  PSHARD_ASSIGN_OR_RETURN(planner::VisionGraph vision, planner::build_vision_graph(*pfile));
  PSHARD_ASSIGN_OR_RETURN(auto tiers, planner::parse_image_tiers(image_tiers, vision));
  planner::FixedMachineModel m(machine);
  planner::CompileOptions o;
  o.tiers = {1, 16};
  o.n_ctx = 512;
  o.threads = machine.threads;
  o.strategy = planner::Strategy::kSearch;
  const uint64_t minimum = planner::minimum_budget(graph, m, o);
  const uint64_t w = graph.total_weight_bytes(), v = vision.total_weight_bytes();
  const uint64_t act = vision.activation_bytes(tiers.back().patches);
  o.budgets = {minimum, minimum + act + v / 3, minimum + act + v + (v >> 1),
               minimum + w + act + 2 * v};
  PSHARD_ASSIGN_OR_RETURN(planner::PlanGrid grid, planner::plan_grid(graph, m, o));
  const planner::VisionPhasePlans plans = planner::plan_vision_phase(vision, m, grid, tiers);
  return planner::serialize_schedule(graph, grid, "vlm-schedule-test", &plans);
}

} // namespace pshard::testing
