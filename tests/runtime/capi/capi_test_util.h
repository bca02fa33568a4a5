// What the C API tests share: the shared model, its known answer, and a schedule for it.
#pragma once

#include "pshard/Planner/Planner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/gguf/gguf_file.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace pshard::capi_test {

inline const std::string kModel = std::string(PSHARD_SHARED_DIR) + "/models/stories260K.gguf";
inline const std::vector<int32_t> kExpected = {432, 383, 286, 261, 376, 298, 315, 421,
                                               395, 317, 426, 338, 401, 396, 267, 337};

#define SKIP_WITHOUT_MODEL()                                                                       \
  if (!std::filesystem::exists(kModel))                                                            \
  GTEST_SKIP() << "shared model " << kModel << " is not present"

// A schedule for stories260K written to a temporary file: budgets from the minimum up,
// resident KV caches sized for the 3 sequences the batch tests serve.
inline std::string schedule_file(std::vector<uint64_t>* budgets) {
  const std::string path = ::testing::TempDir() + "/capi_stories.pshard";
  auto file = pshard::gguf::GgufFile::open(kModel, pshard::gguf::OpenMode::kMetadataOnly);
  auto graph = pshard::planner::build_model_graph(**file);
  pshard::planner::FixedMachineParams mp;
  mp.cpu_flops = 2e9;
  mp.h2d_bandwidth = mp.d2h_bandwidth = 2e9;
  pshard::planner::FixedMachineModel machine(mp);
  pshard::planner::CompileOptions o;
  o.tiers = {1, 4, 16};
  o.n_ctx = 128;
  o.strategy = pshard::planner::Strategy::kGpuOnly; // streams: the stats have something to say
  o.parallel = 3;
  const uint64_t lo = pshard::planner::minimum_budget(*graph, o);
  o.budgets = {lo, lo + graph->total_weight_bytes() / 2};
  *budgets = o.budgets;
  auto grid = pshard::planner::plan_grid(*graph, machine, o);
  EXPECT_TRUE(grid.ok()) << grid.status().to_string();
  EXPECT_TRUE(pshard::planner::write_schedule_file(*graph, *grid, path, "capi-test").ok());
  return path;
}

} // namespace pshard::capi_test
