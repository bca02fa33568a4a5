// Hot experts resident (issue 13, expert-level MoE): the experts kept resident are a
// layer's hottest by the routing profile (index order when uniform), the copy is priced as
// the expected routed non-resident experts and the slot as their worst case, and on the
// moe8x2 shape with a skewed profile at a budget holding about half the experts a plan
// streaming every MoE block with hot experts resident is predicted faster at decode than
// the best whole-block plan the planner finds. Uniform routing still gives valid plans.
#include "compiler/lib/Planner/PlannerInternal.h"
#include "moe_test_util.h"
#include "pshard/Planner/Planner.h"
#include "runtime/model/routing_profile.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

namespace pshard::planner {
namespace {

// pshard-mkmodel --n-embd 1024 --n-layer 16 --n-head 16 --n-head-kv 8 --n-ff 4096
// --n-expert 8 --n-expert-used 2 (the moe8x2 shape).
ModelHParams moe8x2() {
  ModelHParams hp;
  hp.n_vocab = 32000;
  hp.n_embd = 1024;
  hp.n_layer = 16;
  hp.n_head = 16;
  hp.n_head_kv = 8;
  hp.head_dim = 64;
  hp.n_ff = 4096;
  hp.n_expert = 8;
  hp.n_expert_used = 2;
  hp.n_ff_exp = hp.n_ff;
  return hp;
}

// Expert (3·r) mod E is the r-th hottest, with weight decay^r: the hot experts are not
// the low indices, so choosing by index would fail.
int32_t expert_of_rank(int64_t rank, int64_t n_expert) {
  return static_cast<int32_t>(3 * rank % n_expert);
}
RoutingProfile skewed(const ModelHParams& hp, double decay) {
  RoutingProfile r = *RoutingProfile::empty_for(hp, "skewed", "test");
  const uint64_t tokens = 4096;
  std::vector<double> w(static_cast<size_t>(hp.n_expert));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::pow(decay, static_cast<double>(i));
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  for (RoutingLayer& l : r.layers) {
    l.tokens = tokens;
    const uint64_t total = tokens * static_cast<uint64_t>(hp.n_expert_used);
    uint64_t given = 0;
    for (int64_t rank = 1; rank < hp.n_expert; ++rank)
      given += l.counts[static_cast<size_t>(expert_of_rank(rank, hp.n_expert))] =
          static_cast<uint64_t>(static_cast<double>(total) * w[static_cast<size_t>(rank)] / sum);
    l.counts[static_cast<size_t>(expert_of_rank(0, hp.n_expert))] = total - given;
  }
  EXPECT_TRUE(r.validate().ok()) << r.validate().to_string();
  return r;
}

using testing::first_moe;

// PCIe faster than the CPU reads RAM for MoE (so streaming, not the CPU, is the contest).
FixedMachineParams fast_link() {
  FixedMachineParams p;
  p.cpu_bandwidth = 20e9;
  p.h2d_bandwidth = 25e9;
  p.d2h_bandwidth = 25e9;
  return p;
}

TEST(HotExperts, TheHottestComeFirstAndUniformTiesGoByIndex) {
  const ModelHParams hp = moe8x2();
  ModelGraph uniform = synthetic_model_graph(hp, TensorType::kQ8_0);
  ModelGraph profiled = uniform;
  ASSERT_TRUE(apply_routing_profile(profiled, skewed(hp, 0.6)).ok());
  const std::vector<int32_t> heat = first_moe(profiled).experts_by_heat();
  ASSERT_EQ(heat.size(), 8u);
  for (int64_t r = 0; r < 8; ++r)
    EXPECT_EQ(heat[static_cast<size_t>(r)], expert_of_rank(r, 8)) << r;
  const std::vector<int32_t> u = first_moe(uniform).experts_by_heat();
  for (size_t e = 0; e < u.size(); ++e)
    EXPECT_EQ(u[e], static_cast<int32_t>(e));
  EXPECT_EQ(detail::hot_expert_ids(first_moe(profiled), 3),
            (std::vector<int32_t>{0, 3, 6})); // ranks 0, 1, 2, ascending ids
}

TEST(HotExperts, StreamedExpertsAreTheExpectedNonResidentOnes) {
  const ModelHParams hp = moe8x2();
  ModelGraph g = synthetic_model_graph(hp, TensorType::kQ8_0);
  ASSERT_TRUE(apply_routing_profile(g, skewed(hp, 0.6)).ok());
  const SubLayerInfo& s = first_moe(g);
  for (int64_t n : {1, 4, 64}) {
    EXPECT_NEAR(s.expected_streamed_experts(n, 0), s.expected_experts(n), 1e-12);
    EXPECT_EQ(s.max_streamed_experts(n, 0), s.max_experts(n));
    double previous = s.expected_streamed_experts(n, 0);
    for (int64_t h = 1; h <= 8; ++h) {
      const double now = s.expected_streamed_experts(n, h);
      // Σ over the non-resident of 1 − (1 − p_e)^n, recomputed from the profile.
      double direct = 0;
      for (int64_t r = h; r < 8; ++r)
        direct += 1.0 - std::pow(1.0 - s.expert_prob[static_cast<size_t>(expert_of_rank(r, 8))],
                                 static_cast<double>(n));
      EXPECT_NEAR(now, direct, 1e-12);
      EXPECT_LT(now, previous + 1e-12);
      EXPECT_LE(s.max_streamed_experts(n, h), 8 - h);
      previous = now;
    }
    EXPECT_EQ(s.expected_streamed_experts(n, 8), 0.0);
  }
  EXPECT_EQ(s.max_streamed_experts(1, 7), 1); // one cold expert left: the slot holds one
}

struct HalfExperts {
  ModelGraph graph;
  CompileOptions options;
  detail::ContextCosts cc;
  detail::ResidentSet rs; // every sub-layer but the MoE blocks
  uint64_t budget = 0;
};

HalfExperts half_experts(bool skew, const MachineModel& machine) {
  HalfExperts st;
  const ModelHParams hp = moe8x2();
  st.graph = synthetic_model_graph(hp, TensorType::kQ8_0);
  if (skew) {
    EXPECT_TRUE(apply_routing_profile(st.graph, skewed(hp, 0.6)).ok());
  }
  CompileOptions o;
  o.tiers = {1};
  o.n_ctx = 1024;
  o.budgets = {1ull << 30};
  st.options = *detail::resolved_options(st.graph, machine, o);
  st.cc = detail::costs_per_context(st.graph, machine, st.options).back();
  std::vector<bool> resident(st.graph.sublayers.size());
  uint64_t experts = 0, largest_slot = 0;
  for (size_t i = 0; i < resident.size(); ++i) {
    const SubLayerInfo& s = st.graph.sublayers[i];
    resident[i] = s.kind != SubLayerKind::kMoe;
    if (s.kind == SubLayerKind::kMoe) {
      experts += static_cast<uint64_t>(s.n_expert) * detail::hot_expert_bytes(s);
      largest_slot =
          std::max(largest_slot, detail::align_up(st.cc.tiers[0].costs.sublayers[i].slot_bytes));
    }
  }
  st.rs = detail::make_resident_set(st.graph, st.cc.options, resident);
  // About half the experts besides the rest of the model, its fixed buffers and a slot.
  st.budget = st.rs.bytes + st.cc.tiers[0].gpu_fixed_bytes + largest_slot + experts / 2;
  st.options.budgets = {st.budget};
  st.options.expert_level = false; // plan_grid's best whole-block plan, to compare with
  return st;
}

detail::HotCandidate hot_plan(const HalfExperts& st, const MachineModel& machine) {
  const detail::TierCosts& tc = st.cc.tiers[0];
  const detail::Candidate base = detail::build_strategy(Strategy::kGpuOnly, tc, st.budget, st.rs);
  EXPECT_TRUE(base.feasible());
  return detail::add_hot_experts(st.graph, machine, tc, st.budget, st.rs, base);
}

// What the plan needs in VRAM: the resident set, fixed buffers, slots and hot experts.
void expect_fits(const HalfExperts& st, const detail::HotCandidate& h) {
  EXPECT_TRUE(h.c.feasible());
  EXPECT_LE(st.rs.bytes + st.cc.tiers[0].gpu_fixed_bytes +
                static_cast<uint64_t>(h.c.slots) * h.c.slot_bytes + h.hot.bytes,
            st.budget);
  uint64_t bytes = 0;
  for (size_t i = 0; i < st.graph.sublayers.size(); ++i) {
    const SubLayerInfo& s = st.graph.sublayers[i];
    EXPECT_LE(h.hot.count[i], s.n_expert);
    if (h.c.placements[i] != Placement::kGpuStreamed) {
      EXPECT_EQ(h.hot.count[i], 0) << s.name;
    }
    bytes += static_cast<uint64_t>(h.hot.count[i]) * detail::hot_expert_bytes(s);
    if (h.c.placements[i] == Placement::kGpuStreamed) { // the slot holds the worst case
      EXPECT_GE(h.c.slot_bytes, h.costs.sublayers[i].slot_bytes) << s.name;
    }
  }
  EXPECT_EQ(bytes, h.hot.bytes);
}

TEST(HotExperts, ASkewedProfileAtHalfTheExpertsBeatsTheBestWholeBlockPlanAtDecode) {
  const FixedMachineModel machine(fast_link());
  const HalfExperts st = half_experts(/*skew=*/true, machine);
  const detail::HotCandidate h = hot_plan(st, machine);
  expect_fits(st, h);
  int64_t hot = 0;
  for (size_t i = 0; i < st.graph.sublayers.size(); ++i)
    if (h.hot.count[i] > 0) {
      hot += h.hot.count[i];
      // Each layer's resident experts are its hottest.
      std::vector<int32_t> want;
      for (int64_t r = 0; r < h.hot.count[i]; ++r)
        want.push_back(expert_of_rank(r, 8));
      std::sort(want.begin(), want.end());
      EXPECT_EQ(detail::hot_expert_ids(st.graph.sublayers[i], h.hot.count[i]), want);
    }
  EXPECT_GE(hot, 16 * 3); // about half of the 128 experts fit
  auto grid = plan_grid(st.graph, machine, st.options);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  const double whole_ms = grid->at(0, 0).predicted_ms_per_pass;
  const double hot_ms = h.c.seconds * 1e3;
  std::printf("moe8x2 shape, %.0f MiB: best whole-block plan %.3f ms (%s), hot experts %.3f ms "
              "(%lld resident)\n",
              static_cast<double>(st.budget) / (1 << 20), whole_ms, grid->at(0, 0).strategy.c_str(),
              hot_ms, static_cast<long long>(hot));
  EXPECT_LT(hot_ms, whole_ms * 0.9);
}

TEST(HotExperts, UniformRoutingStillGivesAValidPlanNoSlowerThanWithout) {
  const FixedMachineModel machine(fast_link());
  const HalfExperts st = half_experts(/*skew=*/false, machine);
  const detail::TierCosts& tc = st.cc.tiers[0];
  const detail::Candidate base = detail::build_strategy(Strategy::kGpuOnly, tc, st.budget, st.rs);
  const detail::HotCandidate h = hot_plan(st, machine);
  expect_fits(st, h);
  EXPECT_LE(h.c.seconds, base.seconds);
  // Every expert saves the same expected copy (k/E per token): ties go to the earlier
  // sub-layer, so whole layers fill in order (a full layer needs no routing wait), and
  // within a layer the lower ids.
  int64_t previous = 8, total = 0;
  for (size_t i = 0; i < st.graph.sublayers.size(); ++i)
    if (st.graph.sublayers[i].kind == SubLayerKind::kMoe) {
      EXPECT_LE(h.hot.count[i], previous) << st.graph.sublayers[i].name;
      previous = h.hot.count[i];
      total += h.hot.count[i];
      const std::vector<int32_t> ids =
          detail::hot_expert_ids(st.graph.sublayers[i], h.hot.count[i]);
      for (size_t e = 0; e < ids.size(); ++e)
        EXPECT_EQ(ids[e], static_cast<int32_t>(e));
    }
  EXPECT_GE(total, 16 * 3);
}

} // namespace
} // namespace pshard::planner
