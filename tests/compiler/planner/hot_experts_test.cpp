// Resident experts (issue 13, expert-level MoE): the experts kept resident are a layer's
// hottest by the routing profile (index order when uniform), and a copy is priced as the
// expected routed non-resident experts, the slot as their worst case. The plans that use
// them are tested in expert_level_test.cpp.
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

} // namespace
} // namespace pshard::planner
