// Routing profiles in the planner: the expected distinct experts follow the measured
// frequencies (uniform frequencies give the uniform formula back), a profile of another
// shape is refused, and on the Qwen3-30B-A3B shape a skewed profile predicts prefill
// tiers faster than uniform routing while decode (k experts whatever the skew) stays.
#include "moe_test_util.h"
#include "pshard/Planner/Planner.h"
#include "runtime/model/routing_profile.h"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

ModelHParams moe_hparams(int64_t n_layer, int64_t n_expert, int64_t k) {
  ModelHParams hp;
  hp.n_vocab = 256;
  hp.n_embd = 64;
  hp.n_layer = n_layer;
  hp.n_ff = 32;
  hp.n_head = 4;
  hp.n_head_kv = 2;
  hp.head_dim = 16;
  hp.n_expert = n_expert;
  hp.n_expert_used = k;
  hp.n_ff_exp = hp.n_ff;
  return hp;
}

RoutingProfile skewed(const ModelHParams& hp, int64_t hot, int64_t hot_slots) {
  return testing::skewed_routing(hp, hot, hot_slots);
}

using testing::first_moe;

TEST(Routing, UniformCountsGiveTheUniformFormula) {
  const ModelHParams hp = moe_hparams(2, 128, 8);
  ModelGraph uniform = synthetic_model_graph(hp, TensorType::kQ8_0);
  ModelGraph profiled = uniform;
  RoutingProfile r = *RoutingProfile::empty_for(hp, "uniform", "test");
  for (RoutingLayer& l : r.layers) {
    l.tokens = 128;
    std::fill(l.counts.begin(), l.counts.end(), 8); // every expert 8 of 128 tokens
  }
  ASSERT_TRUE(apply_routing_profile(profiled, r).ok());
  for (int64_t n : {1, 4, 16, 64, 512})
    EXPECT_NEAR(first_moe(profiled).expected_experts(n), first_moe(uniform).expected_experts(n),
                1e-9)
        << n;
}

TEST(Routing, SkewedRoutingTouchesFewerExpertsOnlyWhenTokensShareThem) {
  const ModelHParams hp = moe_hparams(2, 128, 8);
  ModelGraph uniform = synthetic_model_graph(hp, TensorType::kQ8_0);
  ModelGraph profiled = uniform;
  ASSERT_TRUE(apply_routing_profile(profiled, skewed(hp, 16, 6)).ok());
  const SubLayerInfo& u = first_moe(uniform);
  const SubLayerInfo& s = first_moe(profiled);
  EXPECT_NEAR(s.expected_experts(1), 8.0, 1e-9); // one token reads k experts, skew or not
  for (int64_t n : {4, 16, 64}) {
    EXPECT_LT(s.expected_experts(n), u.expected_experts(n)) << n;
    EXPECT_LT(s.weight_bytes_read(n), u.weight_bytes_read(n)) << n;
  }
  EXPECT_NEAR(s.expected_experts(100000), 128.0, 1e-6); // every expert once in a while
}

TEST(Routing, AProfileOfAnotherShapeIsRefused) {
  const ModelHParams hp = moe_hparams(2, 128, 8);
  ModelGraph g = synthetic_model_graph(hp, TensorType::kQ8_0);
  Status s = apply_routing_profile(g, *RoutingProfile::empty_for(moe_hparams(2, 64, 8), "m", ""));
  EXPECT_EQ(s.code(), StatusCode::kModelMismatch) << s.to_string();
  EXPECT_NE(s.message().find("8 of 64"), std::string::npos) << s.message();
  s = apply_routing_profile(g, *RoutingProfile::empty_for(moe_hparams(3, 128, 8), "m", ""));
  EXPECT_EQ(s.code(), StatusCode::kModelMismatch) << s.to_string();
  EXPECT_NE(s.message().find("layer 2"), std::string::npos) << s.message();
  s = apply_routing_profile(g, *RoutingProfile::empty_for(moe_hparams(1, 128, 8), "m", ""));
  EXPECT_NE(s.message().find("no layer 1"), std::string::npos) << s.message();
  ModelHParams dense = moe_hparams(2, 0, 0);
  ModelGraph d = synthetic_model_graph(dense, TensorType::kQ8_0);
  s = apply_routing_profile(d, *RoutingProfile::empty_for(hp, "m", ""));
  EXPECT_NE(s.message().find("dense"), std::string::npos) << s.message();
}

// Qwen3-30B-A3B's shape on the RTX 5090 reference profile, 2 GiB.
TEST(Routing, ASkewedProfilePredictsPrefillTiersFasterOnTheQwen3MoeShape) {
  const std::string profile =
      std::string(PSHARD_PROFILES_BUILD_DIR) + "/desktop-rtx5090-32gb.pshprof";
  if (!std::filesystem::exists(profile))
    GTEST_SKIP() << "shipped profile not built: " << profile;
  const ModelHParams hp = testing::qwen3_30b_a3b();
  ModelGraph uniform = synthetic_model_graph(hp, TensorType::kQ4_0);
  ModelGraph profiled = uniform;
  ASSERT_TRUE(apply_routing_profile(profiled, skewed(hp, 16, 6)).ok());
  auto loaded = Profile::load_file(profile);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  auto machine = ProfileMachineModel::create(*loaded);
  ASSERT_TRUE(machine.ok()) << machine.status().to_string();
  CompileOptions o;
  o.budgets = {2ull << 30};
  o.tiers = {1, 16, 64};
  o.n_ctx = 4096;
  auto u = plan_grid(uniform, **machine, o);
  auto s = plan_grid(profiled, **machine, o);
  ASSERT_TRUE(u.ok() && s.ok()) << u.status().to_string() << s.status().to_string();
  const double u1 = u->at(0, 0).predicted_ms_per_pass, s1 = s->at(0, 0).predicted_ms_per_pass;
  EXPECT_LE(s1, u1 * (1 + 1e-9));
  for (size_t t : {size_t{1}, size_t{2}}) {
    const double ut = u->at(0, t).predicted_ms_per_pass, st = s->at(0, t).predicted_ms_per_pass;
    std::printf("tier %lld: uniform %.3f ms, skewed %.3f ms\n",
                static_cast<long long>(o.tiers[t]), ut, st);
    EXPECT_LT(st, ut * 0.95) << "tier " << o.tiers[t];
  }
}

} // namespace
} // namespace pshard::planner
