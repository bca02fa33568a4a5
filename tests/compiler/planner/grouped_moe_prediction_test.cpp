// Issue 13 item 4's predictions on the Qwen3-30B-A3B shape with the RTX 5090 reference
// profile: decode (tier 1) at a 2 GiB budget, whole blocks and expert-level with uniform
// and skewed routing, and fully resident, each priced with and without the schema 1.3
// figures (grouped MoE cells, CUDA graph overhead). "Without" is the same profile with
// those fields cleared, which the estimator prices exactly as before 1.3.
//
// The reference profiles' grouped cells and graph overhead are EXTRAPOLATED from each
// card's own matmul roofline (profiles/reference/README.md), not measured: these are the
// planner's predictions on those cells. The issue's "fully resident ≥ 150 tok/s from
// measured-shape cells" needs a profile measured on the card by the CUDA measurer.
//
// Predicted when this was written (tok/s, before -> with the 1.3 figures): 2 GiB whole
// blocks 49.4 -> 50.5, expert-level uniform 53.8 -> 54.2, skewed 73.1 -> 73.1; fully
// resident 59.3 -> 222.5. Since the simulation slows a split block's CPU experts while
// any copy runs: uniform 53.2 -> 53.3, skewed 67.4 -> 67.4. At 2 GiB a decode pass waits
// on the CPU's experts and host memory, not on launches, so fewer launches gain 0-2% and
// the issue's 1.25 x 53.7 = 67.1 tok/s with uniform routing is not reached (~14 tok/s
// short; the test prints the gap and asserts what holds: skewed routing is past it).
// Fully resident, launches were most of the pass: 1824 per token at 5 us plus a launch
// inside every expert matrix's cell, against 17 per layer at the graph rate.
#include "moe_test_util.h"
#include "pshard/Planner/Planner.h"
#include "runtime/model/routing_profile.h"

#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

using testing::qwen3_30b_a3b;
using testing::skewed_routing;

constexpr double kIssueBaseline = 53.7; // tok/s at 2 GiB, tier 1, when issue 13 was filed

class GroupedMoePrediction : public ::testing::Test {
protected:
  void SetUp() override {
    const std::string path =
        std::string(PSHARD_PROFILES_BUILD_DIR) + "/desktop-rtx5090-32gb.pshprof";
    if (!std::filesystem::exists(path))
      GTEST_SKIP() << "shipped profile not built: " << path;
    auto with = Profile::load_file(path);
    ASSERT_TRUE(with.ok()) << with.status().to_string();
    ASSERT_FALSE(with->data().gpu->grouped_expert.empty()) << "the 5090 profile lost its cells";
    std::unique_ptr<fb::ProfileT> stripped(fb::UnPackSizePrefixedProfile(with->bytes().data()));
    stripped->gpu->grouped_expert.clear();
    stripped->gpu->grouped_expert_op.clear();
    stripped->gpu->graph_launch_overhead_s = 0;
    auto without = Profile::from_object(std::move(*stripped));
    ASSERT_TRUE(without.ok()) << without.status().to_string();
    with_ = std::make_unique<Profile>(std::move(*with));
    without_ = std::make_unique<Profile>(std::move(*without));
    auto a = ProfileMachineModel::create(*with_);
    auto b = ProfileMachineModel::create(*without_);
    ASSERT_TRUE(a.ok() && b.ok());
    grouped_ = std::move(*a);
    before_ = std::move(*b);
    ASSERT_TRUE(grouped_->has_gpu_grouped_experts() && grouped_->has_gpu_graphs());
    ASSERT_FALSE(before_->has_gpu_grouped_experts() || before_->has_gpu_graphs());
  }
  // The tier-1 plan at one budget, among tiers 1/16/64 as expert_level_test plans them
  // (with tier 1 alone a prompt would be priced as 1024 decode passes).
  static Plan decode_plan(const ModelGraph& g, const MachineModel& m, uint64_t budget,
                          bool expert_level) {
    CompileOptions o;
    o.budgets = {budget};
    o.tiers = {1, 16, 64};
    o.n_ctx = 4096;
    o.expert_level = expert_level;
    auto grid = plan_grid(g, m, o);
    EXPECT_TRUE(grid.ok()) << grid.status().to_string();
    return grid.ok() ? grid->at(0, 0) : Plan{};
  }
  std::unique_ptr<Profile> with_, without_;
  std::unique_ptr<MachineModel> grouped_, before_;
};

TEST_F(GroupedMoePrediction, TwoGiBDecode) {
  const ModelHParams hp = qwen3_30b_a3b();
  const ModelGraph uniform = synthetic_model_graph(hp, TensorType::kQ4_0);
  ModelGraph skewed = uniform;
  ASSERT_TRUE(apply_routing_profile(skewed, skewed_routing(hp, 16, 6)).ok());
  const uint64_t budget = 2ull << 30;
  struct Case {
    const char* name;
    const ModelGraph* graph;
    bool expert_level;
    double before = 0, after = 0;
  } cases[] = {{"whole blocks", &uniform, false},
               {"expert-level uniform", &uniform, true},
               {"expert-level skewed", &skewed, true}};
  for (Case& c : cases) {
    c.before = decode_plan(*c.graph, *before_, budget, c.expert_level).predicted_tokens_per_s;
    c.after = decode_plan(*c.graph, *grouped_, budget, c.expert_level).predicted_tokens_per_s;
    std::printf("2 GiB tier 1, %-21s %6.1f tok/s before, %6.1f with grouped cells (%.2fx; "
                "%.2fx the issue's %.1f)\n",
                c.name, c.before, c.after, c.after / c.before, c.after / kIssueBaseline,
                kIssueBaseline);
    // Fewer launches and one read per expert never make a pass slower.
    EXPECT_GE(c.after, c.before * (1 - 1e-9)) << c.name;
  }
  const double target = 1.25 * kIssueBaseline;
  std::printf("issue target 1.25 x %.1f = %.1f tok/s: uniform %s by %.1f tok/s\n", kIssueBaseline,
              target, cases[1].after >= target ? "past it" : "short of it",
              std::abs(cases[1].after - target));
  // Skewed routing keeps more of a pass's experts resident: faster than uniform, and
  // expert-level beats whole blocks with the new pricing as before it.
  EXPECT_GT(cases[2].after, cases[1].after);
  EXPECT_GT(cases[1].after, cases[0].after);
  EXPECT_GE(cases[2].after, target);
}

TEST_F(GroupedMoePrediction, FullyResidentDecode) {
  const ModelGraph g = synthetic_model_graph(qwen3_30b_a3b(), TensorType::kQ4_0);
  const uint64_t budget = 30ull << 30; // the 5090's 32 GiB less the desktop's own use
  const Plan before = decode_plan(g, *before_, budget, true);
  const Plan after = decode_plan(g, *grouped_, budget, true);
  for (const Plan* p : {&before, &after})
    for (Placement pl : p->placements)
      ASSERT_EQ(pl, Placement::kGpuResident) << "the model should fit in 30 GiB";
  std::printf("fully resident tier 1: %.1f tok/s before, %.1f with grouped cells and CUDA "
              "graphs (%.2fx; the issue wants >= 150 from measured cells)\n",
              before.predicted_tokens_per_s, after.predicted_tokens_per_s,
              after.predicted_tokens_per_s / before.predicted_tokens_per_s);
  EXPECT_GT(after.predicted_tokens_per_s, 2 * before.predicted_tokens_per_s);
  // The issue's line, here on extrapolated cells (see the top of the file).
  EXPECT_GE(after.predicted_tokens_per_s, 150.0);
}

} // namespace
} // namespace pshard::planner
