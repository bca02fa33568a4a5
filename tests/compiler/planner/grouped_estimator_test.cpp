// The estimator with grouped MoE kernels and CUDA graphs (issue 13 item 4), on hand-made
// machines: a GPU MoE block's routed experts cost two grouped launches (plus a combine)
// instead of three per routed expert; a pass that never leaves the device takes every
// launch at the graph rate; a machine without those figures prices exactly as before.
#include "pshard/Planner/Estimator.h"

#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

using P = Placement;

ModelGraph small_moe() {
  ModelHParams hp;
  hp.n_vocab = 256;
  hp.n_embd = 64;
  hp.n_layer = 2;
  hp.n_ff = hp.n_ff_exp = 32;
  hp.n_head = 4;
  hp.n_head_kv = 2;
  hp.head_dim = 16;
  hp.n_expert = 16;
  hp.n_expert_used = 4;
  return synthetic_model_graph(hp, TensorType::kQ8_0);
}

FixedMachineParams gpu_machine(double launch_s) {
  FixedMachineParams p;
  p.gpu_flops = 1e12;
  p.gpu_bandwidth = 1e11;
  p.gpu_launch_s = launch_s;
  return p;
}

SubLayerCost moe_cost(const FixedMachineParams& p, int64_t tier) {
  const ModelGraph g = small_moe();
  const FixedMachineModel machine(p);
  return estimate_sublayer(g.sublayers[2], g, machine, tier, 64, TensorType::kF16, 8);
}

// What the launches add to a MoE block: the difference between 5 µs and free launches.
double launch_share(FixedMachineParams p, int64_t tier) {
  const double with = moe_cost(p, tier).gpu_s;
  p.gpu_launch_s = 0;
  return with - moe_cost(p, tier).gpu_s;
}

TEST(GroupedExperts, LaunchesAreTheGroupedCount) {
  ASSERT_EQ(small_moe().sublayers[2].name, "moe[0]");
  FixedMachineParams p = gpu_machine(5e-6);
  // Per expert: 6 block kernels + 3 per routed expert (4 used).
  EXPECT_NEAR(launch_share(p, 1), (6 + 3 * 4) * 5e-6, 1e-12);
  EXPECT_DOUBLE_EQ(moe_cost(p, 1).gpu_fixed_s, 0); // all of it scales with the experts
  // Grouped: 6 + gate+up + down + combine, the two products' launches inside their cells
  // (the fixed machine's grouped rate is its cells' whole time).
  p.gpu_grouped_bandwidth = 2e11;
  EXPECT_NEAR(launch_share(p, 1), (6 + 1) * 5e-6, 1e-12);
  EXPECT_NEAR(moe_cost(p, 1).gpu_fixed_s, (6 + 3) * 5e-6, 1e-12);
}

TEST(GroupedExperts, ExpertsCostTheirBytesOverTheGroupedRate) {
  FixedMachineParams p = gpu_machine(0);
  const ModelGraph g = small_moe();
  const SubLayerInfo& moe = g.sublayers[2];
  const double before = moe_cost(p, 1).gpu_s;
  p.gpu_grouped_bandwidth = 1e10;
  const double grouped = moe_cost(p, 1).gpu_s;
  // One token reads exactly its 4 experts' three matrices, at 10 GB/s instead of the
  // per-matrix roofline (bandwidth-bound at 100 GB/s here).
  const double expert_read = 4.0 * static_cast<double>(moe.expert_bytes);
  EXPECT_NEAR(grouped - before, expert_read / 1e10 - expert_read / 1e11, 1e-12);
}

TEST(GroupedExperts, DenseSubLayersAreUnchanged) {
  const ModelGraph g = small_moe();
  FixedMachineParams p = gpu_machine(5e-6);
  const FixedMachineModel plain(p);
  p.gpu_grouped_bandwidth = 2e11;
  const FixedMachineModel grouped(p);
  const SubLayerInfo& attn = g.sublayers[1];
  EXPECT_DOUBLE_EQ(estimate_sublayer(attn, g, plain, 1, 64, TensorType::kF16, 8).gpu_s,
                   estimate_sublayer(attn, g, grouped, 1, 64, TensorType::kF16, 8).gpu_s);
}

TEST(GraphReplay, SavingIsEveryLaunchAtTheGraphRateAtDecodeOnly) {
  FixedMachineParams p = gpu_machine(5e-6);
  EXPECT_DOUBLE_EQ(moe_cost(p, 1).gpu_graph_saving_s, 0); // no graph figures: no saving
  p.gpu_graph_launch_s = 1e-6;
  EXPECT_NEAR(moe_cost(p, 1).gpu_graph_saving_s, (6 + 3 * 4) * 4e-6, 1e-12);
  EXPECT_DOUBLE_EQ(moe_cost(p, 16).gpu_graph_saving_s, 0); // prefill shapes vary: no capture
  // Grouped: 9 launches, the two grouped ones' inside their cells' time (slow cells here,
  // so that the block takes longer than its launches).
  p.gpu_grouped_bandwidth = 1e9;
  EXPECT_NEAR(moe_cost(p, 1).gpu_graph_saving_s, (6 + 3) * 4e-6, 1e-12);
  // Never more than the block takes (cells faster than the launch they include).
  p.gpu_grouped_bandwidth = 1e15;
  EXPECT_DOUBLE_EQ(moe_cost(p, 1).gpu_graph_saving_s, moe_cost(p, 1).gpu_s);
}

TEST(GraphReplay, OnlyDeviceOnlyPassesAreReplayed) {
  const ModelGraph g = small_moe();
  FixedMachineParams p = gpu_machine(5e-6);
  p.gpu_graph_launch_s = 1e-6;
  const FixedMachineModel machine(p);
  const SubLayerCosts costs = estimate_costs(g, machine, 1, 64, TensorType::kF16, 8);
  double saving = 0;
  for (const SubLayerCost& c : costs.sublayers)
    saving += c.gpu_graph_saving_s;
  ASSERT_GT(saving, 0);
  const std::vector<P> resident(g.sublayers.size(), P::kGpuResident);
  std::vector<P> head_on_cpu = resident;
  head_on_cpu.back() = P::kCpu;
  // Same pass without graphs, from a machine without the figure.
  p.gpu_graph_launch_s = -1;
  const SubLayerCosts plain = estimate_costs(g, FixedMachineModel(p), 1, 64, TensorType::kF16, 8);
  EXPECT_NEAR(simulate_seconds(plain, resident, 0, 0) - simulate_seconds(costs, resident, 0, 0),
              saving, 1e-12);
  EXPECT_DOUBLE_EQ(simulate_seconds(plain, head_on_cpu, 0, 0),
                   simulate_seconds(costs, head_on_cpu, 0, 0));
}

} // namespace
} // namespace pshard::planner
