// Decode passes as CUDA graphs (cuda_graphs.h): a fully resident plan's greedy tokens
// with graphs equal those without over 540 decode steps, its decode passes are replayed
// from graphs (re-captured and updated, not instantiated each time), and a streamed
// plan never is. The steps cross positions 256 and 512, where decode attention takes
// another chunk (attention.cu): a kernel whose grid grows, which the executable's update
// takes in place. Skips without a GPU; the switch's parsing runs anywhere.
#include "cuda_test_util.h"
#include "executor_test_util.h"

#include <cstdlib>
#include <optional>

namespace pshard {
namespace {

using namespace pshard::testing;

const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378, 290, 311};
constexpr int kSteps = 541; // the prompt's token, then 540 decode steps: past position 512
constexpr int64_t kCtx = 640;

TEST(CudaGraphs, TheEnvironmentSwitchTurnsThemOff) {
  const char* old = std::getenv("PSHARD_CUDA_GRAPHS");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  unsetenv("PSHARD_CUDA_GRAPHS");
  EXPECT_TRUE(cuda::graphs_enabled_from_env()) << "on unless turned off";
  for (const char* off : {"0", "off", "false"}) {
    setenv("PSHARD_CUDA_GRAPHS", off, 1);
    EXPECT_FALSE(cuda::graphs_enabled_from_env()) << off;
  }
  setenv("PSHARD_CUDA_GRAPHS", "1", 1);
  EXPECT_TRUE(cuda::graphs_enabled_from_env());
  if (saved)
    setenv("PSHARD_CUDA_GRAPHS", saved->c_str(), 1);
  else
    unsetenv("PSHARD_CUDA_GRAPHS");
}

struct GraphRun {
  Trace trace;
  int64_t graph_passes = 0, passes = 0;
  int64_t instantiations = 0, updates = 0, launches = 0;
};

// Greedy from kPrompt on a CUDA device with graphs on or off, tier-1 plans of `budget`.
void run(const Model& model, const Schedule& sched, uint64_t budget, bool graphs, GraphRun* out) {
  CudaOptions o;
  o.graphs = graphs;
  auto device = CudaDevice::create(o);
  ASSERT_TRUE(device.ok()) << device.status().to_string();
  const HybridParams params = forced_params(kCtx, budget, 1);
  auto session = HybridSession::create(model, &sched, device->get(), params);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  ASSERT_OK(greedy_trace(**session, kPrompt, kSteps, &out->trace));
  out->graph_passes = (*session)->stats().graph_passes;
  out->passes = (*session)->stats().passes;
  out->instantiations = (*device)->graphs().instantiations();
  out->updates = (*device)->graphs().updates();
  out->launches = (*device)->graphs().launches();
}

// The model of the parameter and its gpu-only tier-1 schedule for this backend (its
// plans reserve the kernel scratch, as a CUDA profile makes them).
class CudaGraphPlans : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    PSHARD_SKIP_WITHOUT_CUDA();
    const std::string path = invariance_model_path(GetParam(), "cuda-graph-");
    PSHARD_SKIP_IF_MISSING(path);
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    model_ = std::move(*model);
    planner::FixedMachineParams machine = test_machine();
    machine.kernel_workspace_bytes = cuda::CudaWorkspace::kBytes;
    machine.vram_bytes = 1ull << 30;
    auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1}, kCtx, {}, machine);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    compiled_.emplace(std::move(*compiled));
  }
  const Schedule& sched() const { return compiled_->schedule; }

  std::unique_ptr<Model> model_;
  std::optional<Compiled> compiled_;
};

TEST_P(CudaGraphPlans, AResidentPlanGivesTheSameTokensFromGraphs) {
  const size_t last = sched().budgets().size() - 1; // past the whole model
  ASSERT_TRUE(all_resident(sched().plan({last, 0, 0})));
  GraphRun eager, graphed;
  run(*model_, sched(), sched().budgets()[last], false, &eager);
  run(*model_, sched(), sched().budgets()[last], true, &graphed);
  EXPECT_EQ(eager.trace.tokens, graphed.trace.tokens);
  for (size_t i = 0; i < eager.trace.logits.size() && i < graphed.trace.logits.size(); ++i)
    EXPECT_LE(cuda_testing::relative_error(graphed.trace.logits[i], eager.trace.logits[i]), 1e-5)
        << "pass " << i << ": the same kernels with the same arguments";
  EXPECT_EQ(eager.graph_passes, 0);
  EXPECT_EQ(eager.launches, 0);
  // Every pass is one token (tier 1): all of them replayed, and after the first few
  // (one key with logits, one without) by updating the executable, not instantiating.
  EXPECT_EQ(graphed.graph_passes, graphed.passes);
  EXPECT_EQ(graphed.launches, graphed.passes);
  EXPECT_GT(graphed.updates, 0);
  EXPECT_LE(graphed.instantiations, 4);
  std::cout << GetParam() << ": " << graphed.graph_passes << " of " << graphed.passes
            << " passes from graphs, " << graphed.instantiations << " instantiated, "
            << graphed.updates << " updated\n";
}

TEST_P(CudaGraphPlans, AStreamedPlanRunsOpByOp) {
  ASSERT_FALSE(all_resident(sched().plan({0, 0, 0}))) << "the smallest budget streams";
  GraphRun streamed;
  run(*model_, sched(), sched().budgets()[0], true, &streamed);
  EXPECT_EQ(streamed.graph_passes, 0);
  EXPECT_EQ(streamed.launches, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, CudaGraphPlans,
                         ::testing::Values("stories260K.gguf", "mk-dense6", "mk-qwen3",
                                           "mk-llama-bias-yarn", "mk-gemma2"),
                         model_param_name);

} // namespace
} // namespace pshard
