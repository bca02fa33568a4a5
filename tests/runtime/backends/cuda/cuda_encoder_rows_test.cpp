// Encoders on the GPU: every plan of auto and GPU-only schedules of a BERT ("mk-bert":
// position and type tables, LayerNorms with biases, exact GELU) and a NomicBert
// ("mk-nomic-bert": RoPE, fused q/k/v, SwiGLU) and an EmbeddingGemma ("mk-gemma-embedding":
// windows centred on the query), each text one pass attending both ways,
// run on the CUDA backend, gives the plain CPU session's rows within a relative L2 error
// of 3e-2 (the CPU rounds activations to 8 bits for Q8_0 weights, the GPU keeps them
// float). The arena never exceeds the plan's budget.
#include "cuda_test_util.h"
#include "tests/runtime/batch/embedding_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 64;
constexpr double kRowBound = 3e-2;

class CudaEncoderRows : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaEncoderRows, EveryPlanGivesTheCpuRows) {
  PSHARD_SKIP_WITHOUT_CUDA();
  const std::string path = invariance_model_path(GetParam(), "cuda-enc-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ASSERT_FALSE((*model)->hparams().causal);
  const std::vector<TokenId> text = random_tokens(41, (*model)->hparams().n_vocab, 5u);
  auto cpu = CpuSession::create(**model, {kCtx, 2, kCtx});
  ASSERT_TRUE(cpu.ok());
  const std::vector<float> want = rows_of(**cpu, text);
  int plans = 0;
  for (planner::Strategy strategy : {planner::Strategy::kAuto, planner::Strategy::kGpuOnly}) {
    planner::FixedMachineParams machine = test_machine();
    machine.kernel_workspace_bytes = cuda::CudaWorkspace::kBytes;
    machine.vram_bytes = 1ull << 30;
    auto compiled = compile_schedule(path, strategy, {1, 4, kCtx}, kCtx, {}, machine);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const Schedule& sched = compiled->schedule;
    for (uint64_t budget : sched.budgets()) {
      SCOPED_TRACE(std::string(planner::strategy_name(strategy)) + " budget " +
                   std::to_string(budget));
      auto device = CudaDevice::create();
      ASSERT_TRUE(device.ok()) << device.status().to_string();
      auto session =
          HybridSession::create(**model, &sched, device->get(), forced_params(kCtx, budget, 0));
      ASSERT_TRUE(session.ok()) << session.status().to_string();
      const std::vector<float> got = rows_of(**session, text);
      EXPECT_LE(cuda_testing::relative_error(got, want), kRowBound);
      EXPECT_LE((*device)->arena_bytes(), budget);
      ++plans;
    }
  }
  std::cout << GetParam() << ": " << plans << " plans give the CPU's rows on the GPU\n";
}

INSTANTIATE_TEST_SUITE_P(Models, CudaEncoderRows,
                         ::testing::Values("mk-bert", "mk-nomic-bert", "mk-gemma-embedding",
                                           "mk-modern-bert"),
                         model_param_name);

} // namespace
} // namespace pshard
