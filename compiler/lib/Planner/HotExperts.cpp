// Resident experts of an expert-level MoE block (ExpertPlacement.cpp chooses how many):
// which they are — a block's hottest by the routing profile (SubLayerInfo::experts_by_heat),
// recorded ascending as the artifact lists them — and what VRAM one of them takes.
#include "PlannerInternal.h"

#include <algorithm>

namespace pshard::planner::detail {

uint64_t hot_expert_bytes(const SubLayerInfo& s) {
  uint64_t bytes = 0;
  for (const MatmulGroup& m : s.matmuls)
    if (m.pool > m.count) // one expert's slice of each expert tensor, laid out on its own
      bytes += align_up(m.matrix_bytes);
  return bytes;
}

std::vector<int32_t> hot_expert_ids(const SubLayerInfo& s, int64_t count) {
  std::vector<int32_t> ids = s.experts_by_heat();
  ids.resize(static_cast<size_t>(std::clamp<int64_t>(count, 0, static_cast<int64_t>(ids.size()))));
  std::sort(ids.begin(), ids.end());
  return ids;
}

} // namespace pshard::planner::detail
