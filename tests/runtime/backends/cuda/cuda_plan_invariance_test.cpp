// Plan invariance on the GPU: every plan of an artifact — every budget × tier, for the
// searched plans and each forced strategy — run on the CUDA backend gives the plain CPU
// session's greedy tokens, and logits within a relative L2 error of 3e-2 per pass (the
// CPU rounds activations to 8 bits for Q8_0 weights, the GPU keeps them float; float
// models agree far closer). The arena never exceeds the plan's budget.
#include "cuda_test_util.h"
#include "executor_test_util.h"

#include <cctype>

namespace pshard {
namespace {

using namespace pshard::testing;

const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378, 290, 311};
constexpr int kSteps = 10;
constexpr int64_t kCtx = 64;
constexpr double kLogitBound = 3e-2;

::testing::AssertionResult close_trace(const Trace& want, const Trace& got) {
  if (want.tokens != got.tokens)
    return ::testing::AssertionFailure() << "greedy tokens differ";
  for (size_t i = 0; i < want.logits.size(); ++i) {
    const double e = cuda_testing::relative_error(got.logits[i], want.logits[i]);
    if (e > kLogitBound)
      return ::testing::AssertionFailure() << "pass " << i << ": logits relative error " << e;
  }
  return ::testing::AssertionSuccess();
}

class CudaPlanInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaPlanInvariance, EveryPlanGivesTheCpuTokens) {
  PSHARD_SKIP_WITHOUT_CUDA();
  const std::string path = invariance_model_path(GetParam(), "cuda-");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto reference_session = CpuSession::create(**model, {kCtx, 2, 256});
  ASSERT_TRUE(reference_session.ok());
  Trace reference;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, kSteps, &reference));

  int plans = 0;
  for (planner::Strategy strategy :
       {planner::Strategy::kAuto, planner::Strategy::kGpuOnly, planner::Strategy::kStatic,
        planner::Strategy::kDynamic, planner::Strategy::kLayers}) {
    // Plans for this backend reserve its kernel scratch, as a CUDA profile makes them.
    planner::FixedMachineParams machine = test_machine();
    machine.kernel_workspace_bytes = cuda::CudaWorkspace::kBytes;
    machine.vram_bytes = 1ull << 30;
    auto compiled = compile_schedule(path, strategy, {1, 4, 16}, kCtx, {}, machine);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const Schedule& sched = compiled->schedule;
    for (uint64_t budget : sched.budgets())
      for (int64_t tier : sched.tiers()) {
        SCOPED_TRACE(std::string(planner::strategy_name(strategy)) + " budget " +
                     std::to_string(budget) + " tier " + std::to_string(tier));
        const HybridParams params = forced_params(kCtx, budget, tier);
        auto device = CudaDevice::create();
        ASSERT_TRUE(device.ok()) << device.status().to_string();
        auto session = HybridSession::create(**model, &sched, device->get(), params);
        ASSERT_TRUE(session.ok()) << session.status().to_string();
        Trace trace;
        ASSERT_OK(greedy_trace(**session, kPrompt, kSteps, &trace));
        EXPECT_TRUE(close_trace(reference, trace));
        EXPECT_LE((*device)->arena_bytes(), budget);
        ++plans;
      }
  }
  std::cout << GetParam() << ": " << plans << " plans agree on the GPU\n";
}

INSTANTIATE_TEST_SUITE_P(Models, CudaPlanInvariance,
                         ::testing::Values("stories260K.gguf", "stories260K-Q8_0-mixed.gguf",
                                           "stories260K-moe4x2-exact.gguf", "mk-dense6", "mk-moe6",
                                           "mk-qwen3", "mk-qwen2moe", "mk-gpt-oss", "mk-glm4moe",
                                           "mk-qwen3next"),
                         model_param_name);

} // namespace
} // namespace pshard
