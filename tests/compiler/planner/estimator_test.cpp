// The estimator against hand-computed cases: the event simulation's overlap, slot reuse,
// prefetch depth and routing dependency, and the roofline of one sub-layer (also in a served
// pass of several sequences).
#include "compiler/lib/Planner/PlannerInternal.h"
#include "pshard/Planner/Estimator.h"
#include "runtime/model/arch/arch_family.h"

#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

using P = Placement;

// Costs in milliseconds (as seconds × 1e-3) for readable arithmetic.
SubLayerCost cost(double cpu_ms, double gpu_ms, double copy_ms) {
  SubLayerCost c;
  c.cpu_s = c.cpu_loaded_s = cpu_ms * 1e-3;
  c.gpu_s = gpu_ms * 1e-3;
  c.copy_s = c.copy_loaded_s = copy_ms * 1e-3;
  c.slot_bytes = c.stream_bytes = 1;
  return c;
}

double ms(const SubLayerCosts& costs, std::vector<P> placements, int slots, int depth = 0) {
  return simulate_seconds(costs, placements, slots, depth) * 1e3;
}

TEST(Simulate, CopyOverlapsCpuWork) {
  // s0 on the CPU (10 ms) while s1's weights stream in (6 ms); s1 then waits only for its
  // input: 10 ms + 1 ms crossing + 2 ms GPU + 0.5 ms logits back = 13.5 ms.
  SubLayerCosts costs;
  costs.sublayers = {cost(10, 1, 4), cost(20, 2, 6)};
  costs.h2d_hidden_s = 1e-3;
  costs.d2h_logits_s = 0.5e-3;
  EXPECT_NEAR(ms(costs, {P::kCpu, P::kGpuStreamed}, 1), 13.5, 1e-9);
  // A copy longer than the CPU work is exposed: 15 ms copy, then 2 ms + 0.5 ms.
  costs.sublayers[1] = cost(20, 2, 15);
  EXPECT_NEAR(ms(costs, {P::kCpu, P::kGpuStreamed}, 1), 17.5, 1e-9);
  // All on the CPU: 10 + 20, nothing crosses.
  EXPECT_NEAR(ms(costs, {P::kCpu, P::kCpu}, 0), 30.0, 1e-9);
  // Device change GPU -> CPU costs the d2h crossing.
  costs.d2h_hidden_s = 0.25e-3;
  costs.h2d_tokens_s = 0.125e-3;
  EXPECT_NEAR(ms(costs, {P::kGpuResident, P::kCpu}, 0), 0.125 + 1 + 0.25 + 20, 1e-9);
}

TEST(Simulate, SlotReuseWaitsForTheLastUser) {
  // Three streamed sub-layers, 3 ms copies, 2 ms compute.
  SubLayerCosts costs;
  costs.sublayers = {cost(9, 2, 3), cost(9, 2, 3), cost(9, 2, 3)};
  // One slot: copy k+1 waits for sub-layer k: 0-3 c0, 3-5 s0, 5-8 c1, 8-10 s1, 10-13 c2, 13-15 s2.
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed, P::kGpuStreamed, P::kGpuStreamed}, 1), 15.0, 1e-9);
  // Two slots: c0 0-3, c1 3-6, s0 3-5, s1 6-8, c2 waits for s0 (5) and the engine (6): 6-9, s2
  // 9-11.
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed, P::kGpuStreamed, P::kGpuStreamed}, 2), 11.0, 1e-9);
  // Two slots but prefetch depth 1 behaves like one slot.
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed, P::kGpuStreamed, P::kGpuStreamed}, 2, 1), 15.0, 1e-9);
}

TEST(Simulate, RoutedExpertsWaitForTheirInput) {
  SubLayerCosts costs;
  costs.sublayers = {cost(10, 1, 1), cost(20, 2, 6)};
  costs.sublayers[1].copy_needs_input = true; // MoE: the router picks what to copy
  // The copy starts only when s0 is done (10 ms): 10 + 6 + 2.
  EXPECT_NEAR(ms(costs, {P::kCpu, P::kGpuStreamed}, 1), 18.0, 1e-9);
}

TEST(Simulate, ASplitBlocksCpuSideIsSlowedWhileAnyCopyRuns) {
  // s0: a split MoE block, 1 ms on the device after its 2 ms copy, 8 ms of CPU experts
  // from its input on, 4x slower while a copy runs. s1: streamed, a 4 ms copy.
  SubLayerCosts costs;
  costs.sublayers = {cost(0, 1, 2), cost(0, 1, 4)};
  costs.sublayers[0].cpu_side_s = 8e-3;
  costs.sublayers[0].cpu_side_slowdown = 4;
  // Two slots: s1's copy runs ahead (2-6) beside s0's CPU side, which does 0.5 ms of work
  // during copy 0 (0-2), 1 ms during copy 1, and the other 6.5 ms alone: it ends at 12.5;
  // s1 at 13.5.
  SimResult r;
  {
    ModelGraph graph;
    graph.sublayers.resize(2);
    Plan plan;
    plan.placements = {P::kGpuStreamed, P::kGpuStreamed};
    plan.stream_order = {0, 1};
    plan.stream_slot_count = 2;
    r = simulate(graph, costs, plan);
  }
  EXPECT_NEAR(r.seconds * 1e3, 13.5, 1e-9);
  EXPECT_NEAR(r.end_s[0] * 1e3, 12.5, 1e-9);
  EXPECT_NEAR(r.cpu_busy_s * 1e3, 12.5, 1e-9);
  // One slot: copy 1 waits for s0, so only copy 0 slows the CPU side: 2 + 7.5 = 9.5, then
  // copy 1 (9.5-13.5) and s1: 14.5.
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed, P::kGpuStreamed}, 1), 14.5, 1e-9);
  // No slowdown: the CPU side ends at 8 whatever the copies, s1 at 9.
  costs.sublayers[0].cpu_side_slowdown = 1;
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed, P::kGpuStreamed}, 2), 9.0, 1e-9);
}

TEST(Simulate, ASplitBlocksSidesSlowEachOtherWhileBothCompute) {
  // s0: a resident split MoE block, 1 ms of device work and 2 ms of CPU experts, both from
  // its input. Alone each side takes its own time: the block ends at 2 ms.
  SubLayerCosts costs;
  costs.sublayers = {cost(0, 1, 0)};
  costs.sublayers[0].cpu_side_s = 2e-3;
  EXPECT_NEAR(ms(costs, {P::kGpuResident}, 0), 2.0, 1e-9);
  // The device 2x slower while the CPU runs, the CPU 1.5x while the device does: both run
  // until the device's 1 ms of work is done at 2 ms; the CPU did 2/1.5 ms of its work
  // meanwhile and the rest alone: it ends at 2 + (2 - 4/3) = 2.667 ms.
  costs.sublayers[0].gpu_side_beside = 2;
  costs.sublayers[0].cpu_side_beside = 1.5;
  EXPECT_NEAR(ms(costs, {P::kGpuResident}, 0), 2.0 + 2.0 / 3.0, 1e-9);
  // Streamed: the device starts after its 3 ms copy (the router's input was at 0), by when
  // the CPU side is done: neither slows the other, and the copy sets the pace: 3 + 1.
  costs.sublayers[0].copy_s = costs.sublayers[0].copy_loaded_s = 3e-3;
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed}, 1), 4.0, 1e-9);
  // A 1.5 ms copy: the CPU runs alone to 1.5 ms (0.5 ms left), then both: the CPU's
  // 0.5 ms take 0.75 ms, the device meanwhile does 0.375 ms of its 1 ms and the rest
  // alone: the device ends at 1.5 + 0.75 + 0.625 = 2.875 ms.
  costs.sublayers[0].copy_s = costs.sublayers[0].copy_loaded_s = 1.5e-3;
  EXPECT_NEAR(ms(costs, {P::kGpuStreamed}, 1), 2.875, 1e-9);
}

TEST(Simulate, SideBySideIsSymmetricAndNeverFasterThanAlone) {
  for (double a : {0.0, 0.5, 1.0, 3.0})
    for (double b : {0.0, 0.5, 2.0})
      for (double lead : {-1.0, 0.0, 0.25, 4.0}) {
        const SideBySide x = side_by_side(lead, a, 0, b, 2, 1.5);
        const SideBySide y = side_by_side(0, b, lead, a, 1.5, 2); // the roles swapped
        EXPECT_NEAR(x.device_s, y.cpu_s, 1e-12);
        EXPECT_NEAR(x.cpu_s, y.device_s, 1e-12);
        EXPECT_GE(x.device_s, a - 1e-12);
        EXPECT_GE(x.cpu_s, b - 1e-12);
        EXPECT_LE(x.device_s, 2 * a + 1e-12);
        EXPECT_LE(x.cpu_s, 1.5 * b + 1e-12);
        const SideBySide alone = side_by_side(lead, a, 0, b, 1, 1);
        EXPECT_DOUBLE_EQ(alone.device_s, a);
        EXPECT_DOUBLE_EQ(alone.cpu_s, b);
      }
}

TEST(Simulate, RecordsPerSubLayerTimesAndBusyTime) {
  ModelHParams hp;
  hp.n_layer = 0;
  ModelGraph graph;
  graph.sublayers.resize(2);
  SubLayerCosts costs;
  costs.sublayers = {cost(10, 1, 4), cost(20, 2, 6)};
  Plan plan;
  plan.placements = {P::kCpu, P::kGpuStreamed};
  plan.stream_order = {1};
  plan.stream_slot_count = 1;
  const SimResult r = simulate(graph, costs, plan);
  EXPECT_NEAR(r.seconds, 12e-3, 1e-12);
  EXPECT_NEAR(r.cpu_busy_s, 10e-3, 1e-12);
  EXPECT_NEAR(r.gpu_busy_s, 2e-3, 1e-12);
  EXPECT_NEAR(r.copy_busy_s, 6e-3, 1e-12);
  ASSERT_EQ(r.end_s.size(), 2u);
  EXPECT_NEAR(r.start_s[1], 10e-3, 1e-12);
}

TEST(Roofline, FfnIsTheMaxOfComputeAndBandwidthPerMatrix) {
  ModelHParams hp;
  hp.n_vocab = 256;
  hp.n_embd = 64;
  hp.n_layer = 1;
  hp.n_ff = 128;
  hp.n_head = 4;
  hp.n_head_kv = 4;
  hp.head_dim = 16;
  const ModelGraph graph = synthetic_model_graph(hp, TensorType::kF32);
  FixedMachineParams p;
  p.cpu_flops = 1e9;
  p.cpu_bandwidth = 1e9;
  p.gpu_flops = 1e12;
  p.gpu_bandwidth = 1e11;
  p.h2d_bandwidth = 1e10;
  const FixedMachineModel machine(p);
  const SubLayerInfo& ffn = graph.sublayers[2];
  ASSERT_EQ(ffn.name, "ffn[0]");
  // Three 64×128 F32 matrices (32 KiB each). At 1 token: flops 2·64·128 = 16384 per matrix
  // (16.4 µs at 1 GFLOP/s), bytes 32768 (32.8 µs at 1 GB/s): bandwidth-bound.
  const SubLayerCost c1 = estimate_sublayer(ffn, graph, machine, 1, 16, TensorType::kF32, 8);
  EXPECT_NEAR(c1.cpu_s, 3 * 32768 / 1e9, 1e-12);
  // At 64 tokens: flops 64 × 16384 = 1.05 MFLOP per matrix: compute-bound.
  const SubLayerCost c64 = estimate_sublayer(ffn, graph, machine, 64, 16, TensorType::kF32, 8);
  EXPECT_NEAR(c64.cpu_s, 3 * 64 * 16384 / 1e9, 1e-12);
  // The copy moves the whole sub-layer (norm included) at 10 GB/s.
  EXPECT_EQ(c1.stream_bytes, ffn.weight_bytes);
  EXPECT_NEAR(c1.copy_s, static_cast<double>(ffn.weight_bytes) / 1e10, 1e-12);
}

// Two layers of a family, small enough to price by hand.
ModelHParams two_small_layers(const char* arch) {
  ModelHParams hp;
  hp.family = find_arch_family(arch);
  hp.n_vocab = 256;
  hp.n_embd = 64;
  hp.n_layer = 2;
  hp.n_ff = 128;
  hp.n_head = 4;
  hp.n_head_kv = 2;
  hp.head_dim = 16;
  return hp;
}

// Gemma's local layers read their window of the cache however long the context: their
// attention costs the same at 4K as at the window; a global layer's grows with it.
TEST(Roofline, ASlidingWindowLayerReadsOnlyItsWindow) {
  ModelHParams hp = two_small_layers("gemma3");
  hp.sliding_window = 128;
  hp.local_layers = {true, false};
  const ModelGraph graph = synthetic_model_graph(hp, TensorType::kF32);
  const SubLayerInfo& local = graph.sublayers[1];
  const SubLayerInfo& global = graph.sublayers[3];
  ASSERT_EQ(local.name, "attn[0]");
  ASSERT_EQ(global.name, "attn[1]");
  EXPECT_EQ(local.attn_window, 128);
  EXPECT_EQ(global.attn_window, 0);
  FixedMachineParams p;
  p.cpu_flops = p.cpu_bandwidth = 1e9;
  p.gpu_flops = 1e12;
  p.gpu_bandwidth = 1e11;
  p.h2d_bandwidth = 1e10;
  const FixedMachineModel machine(p);
  auto cost = [&](const SubLayerInfo& s, int64_t ctx) {
    return estimate_sublayer(s, graph, machine, 1, ctx, TensorType::kF32, 8);
  };
  EXPECT_EQ(local.flops(1, 4096), local.flops(1, 128));
  EXPECT_DOUBLE_EQ(cost(local, 4096).cpu_s, cost(local, 128).cpu_s);
  EXPECT_DOUBLE_EQ(cost(local, 4096).gpu_s, cost(local, 128).gpu_s);
  EXPECT_LT(cost(local, 64).cpu_s, cost(local, 128).cpu_s); // below the window: the context
  EXPECT_GT(cost(global, 4096).cpu_s, cost(global, 128).cpu_s);
  EXPECT_GT(global.flops(1, 4096), local.flops(1, 4096));
}

// A served pass of 8 tokens from 8 sequences (pshard-compile --parallel): each sequence reads
// its own KV cache and recurrent state, so those bytes are read, and cross the link when
// streamed, once per sequence; the weights once; and never for more sequences than tokens.
TEST(Roofline, AServedPassReadsEachSequencesCacheAndState) {
  ModelHParams hp = two_small_layers("qwen35");
  hp.delta_net = {.n_k_heads = 2, .n_v_heads = 4, .d_k = 16, .d_v = 16, .conv_kernel = 4};
  hp.delta_net.grouped_ba = false;
  hp.delta_net.tiled_heads = true;
  hp.recurrent_layers = {true, false};
  const ModelGraph graph = synthetic_model_graph(hp, TensorType::kF32);
  const SubLayerInfo& state = graph.sublayers[1];
  const SubLayerInfo& ffn = graph.sublayers[2];
  const SubLayerInfo& attn = graph.sublayers[3];
  ASSERT_TRUE(state.recurrent());
  ASSERT_EQ(attn.name, "attn[1]");
  ASSERT_FALSE(attn.recurrent());
  FixedMachineParams p; // bytes bound: the arithmetic is free
  p.cpu_flops = p.gpu_flops = 1e18;
  p.cpu_bandwidth = 1e9;
  p.gpu_bandwidth = 1e11;
  p.h2d_bandwidth = 1e10;
  const FixedMachineModel machine(p);
  constexpr int64_t kCtx = 4096, kTier = 8;
  auto cost = [&](const SubLayerInfo& s, int64_t sequences) {
    return estimate_sublayer(s, graph, machine, kTier, kCtx, TensorType::kF16, 8, sequences);
  };
  const double kv = static_cast<double>(attn.kv_bytes_per_token(TensorType::kF16));
  const double st = static_cast<double>(state.state_bytes(TensorType::kF16));
  ASSERT_GT(kv, 0);
  ASSERT_GT(st, 0);
  // Seven more sequences: seven more caches of kCtx positions, seven more states in and out.
  EXPECT_NEAR(cost(attn, 8).cpu_s - cost(attn, 1).cpu_s, 7 * kv * kCtx / 1e9, 1e-12);
  EXPECT_NEAR(cost(state, 8).cpu_s - cost(state, 1).cpu_s, 7 * 2 * st / 1e9, 1e-12);
  EXPECT_EQ(cost(attn, 8).stream_bytes - cost(attn, 1).stream_bytes,
            static_cast<uint64_t>(7 * kv * kCtx));
  EXPECT_EQ(cost(state, 8).stream_bytes - cost(state, 1).stream_bytes,
            static_cast<uint64_t>(7 * st));
  EXPECT_GT(cost(attn, 8).copy_s, cost(attn, 1).copy_s);
  EXPECT_EQ(cost(attn, 8).slot_bytes, cost(attn, 1).slot_bytes); // a batch reads pages in place
  EXPECT_DOUBLE_EQ(cost(ffn, 8).cpu_s, cost(ffn, 1).cpu_s);      // weights: once
  EXPECT_DOUBLE_EQ(cost(attn, 64).cpu_s, cost(attn, 8).cpu_s);   // no more sequences than tokens
  // And through the planner's costs: --parallel 8 prices tier 8 so, tier 1 as before.
  CompileOptions o;
  o.n_ctx = kCtx;
  o.contexts = {kCtx};
  o.tiers = {1, kTier};
  o.threads = 8;
  o.kv_type = TensorType::kF16;
  const std::vector<SubLayerCosts> one = {
      estimate_costs(graph, machine, 1, kCtx, TensorType::kF16, 8),
      estimate_costs(graph, machine, kTier, kCtx, TensorType::kF16, 8)};
  o.parallel = 8;
  const std::vector<detail::ContextCosts> served = detail::costs_per_context(graph, machine, o);
  ASSERT_EQ(served.size(), 1u);
  ASSERT_EQ(served[0].tiers.size(), 2u);
  const size_t a = 3;
  EXPECT_NEAR(served[0].tiers[0].costs.sublayers[a].cpu_s, one[0].sublayers[a].cpu_s, 1e-9);
  EXPECT_GT(served[0].tiers[1].costs.sublayers[a].cpu_s, 5 * one[1].sublayers[a].cpu_s);
}

TEST(ModelGraph, MoeTouchesMoreDistinctExpertsAtLargerTiers) {
  ModelHParams hp;
  hp.n_vocab = 256;
  hp.n_embd = 64;
  hp.n_layer = 2;
  hp.n_ff = 32;
  hp.n_head = 4;
  hp.n_head_kv = 2;
  hp.head_dim = 16;
  hp.n_expert = 128;
  hp.n_expert_used = 8;
  hp.n_ff_exp = hp.n_ff;
  const ModelGraph graph = synthetic_model_graph(hp, TensorType::kQ8_0);
  const SubLayerInfo& moe = graph.sublayers[2];
  ASSERT_EQ(moe.name, "moe[0]");
  EXPECT_NEAR(moe.expected_experts(1), 8.0, 1e-9);
  EXPECT_GT(moe.expected_experts(16), 8.0 * 7);
  EXPECT_LT(moe.expected_experts(16), 128.0);
  EXPECT_NEAR(moe.expected_experts(1000), 128.0, 1e-6);
  EXPECT_EQ(moe.max_experts(4), 32);
  EXPECT_EQ(moe.max_experts(64), 128);
  EXPECT_LT(moe.weight_bytes_read(1), moe.weight_bytes / 10);
  EXPECT_EQ(moe.weight_bytes_needed(1000), moe.weight_bytes);
}

} // namespace
} // namespace pshard::planner
