// Names of the planner's enums, as artifacts store them and users type them.
#include "pshard/Planner/Plan.h"

namespace pshard::planner {

const char* placement_name(Placement p) {
  switch (p) {
  case Placement::kGpuResident: return "gpu_resident";
  case Placement::kGpuStreamed: return "gpu_streamed";
  case Placement::kCpu: return "cpu";
  }
  return "?";
}

const char* buffer_kind_name(BufferKind k) {
  switch (k) {
  case BufferKind::kWeights: return "weights";
  case BufferKind::kKvCache: return "kv_cache";
  case BufferKind::kStreamSlot: return "stream_slot";
  case BufferKind::kActivations: return "activations";
  case BufferKind::kWorkspace: return "workspace";
  }
  return "?";
}

const char* strategy_name(Strategy s) {
  switch (s) {
  case Strategy::kAuto: return "auto";
  case Strategy::kGpuOnly: return "gpu-only";
  case Strategy::kStatic: return "static";
  case Strategy::kDynamic: return "dynamic";
  case Strategy::kLayers: return "layers";
  case Strategy::kSearch: return "search";
  case Strategy::kCpuOnly: return "cpu-only";
  }
  return "?";
}

Result<Strategy> parse_strategy(const std::string& name) {
  for (Strategy s : {Strategy::kAuto, Strategy::kGpuOnly, Strategy::kStatic, Strategy::kDynamic,
                     Strategy::kLayers})
    if (name == strategy_name(s))
      return s;
  return invalid_argument("unknown strategy '" + name +
                          "': use auto, gpu-only, static, dynamic or layers");
}

int Plan::count(Placement p) const {
  int n = 0;
  for (Placement q : placements)
    n += q == p;
  return n;
}

} // namespace pshard::planner
