// Plan invariance: on the cpu and emu backends every plan of an artifact — every
// budget × context range × tier, for the searched plans and each forced strategy — gives
// the logits and greedy tokens of the plain CPU session, bit for bit, and so does a run
// that looks its plans up, switching tiers after the prompt and context ranges as the
// context grows (moving residency each time). Run on stories260K, its quantized, MoE and
// Qwen-family variants, and multi-layer models of every family made with pshard-mkmodel
// (MoEs with more experts than a tier-1 slot holds, so routed-expert streaming runs).
#include "executor_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378, 290, 311};
constexpr int kSteps = 10;
constexpr int64_t kCtx = 64;
// The prompt and the first steps run in the short range, the rest past it.
const std::vector<int64_t> kContexts = {12, kCtx};

// Streamed sub-layers of the plan (budget, tier) whose slot is smaller than their
// weights: a MoE copying only routed experts, an embedding copying only its rows.
int count_partial_streams(const Schedule& s, uint64_t budget, int64_t tier) {
  const auto* subs = s.root().sublayers();
  int n = 0;
  for (size_t b = 0; b < s.budgets().size(); ++b)
    for (size_t t = 0; t < s.tiers().size(); ++t) {
      const SchedulePlan& p = s.plan({b, t});
      if (p.budget_bytes != budget || p.tier != tier)
        continue;
      for (int32_t i : p.stream_order) {
        n +=
            subs->Get(static_cast<flatbuffers::uoffset_t>(i))->weight_bytes() > p.stream_slot_bytes;
      }
    }
  return n;
}

// Expert-level MoE blocks of the plans at `budget` (every tier and context range when
// `tier` is 0): resident experts, copied ones, and blocks that run experts on the host.
struct SplitCounts {
  int blocks = 0, resident = 0, copied = 0, with_host_experts = 0;
  int copied_ahead = 0; // blocks copying all their copied experts before routing
};
SplitCounts count_splits(const Schedule& s, uint64_t budget, int64_t tier, int64_t n_expert,
                         int64_t k) {
  SplitCounts n;
  for (size_t b = 0; b < s.budgets().size(); ++b)
    for (size_t c = 0; c < s.contexts().size(); ++c)
      for (size_t t = 0; t < s.tiers().size(); ++t) {
        const SchedulePlan& p = s.plan({b, t, c});
        if (p.budget_bytes != budget || (tier != 0 && p.tier != tier))
          continue;
        for (const SchedulePlan::Experts& e : p.experts) {
          ++n.blocks;
          n.resident += static_cast<int>(e.resident.size());
          n.copied += static_cast<int>(e.copied.size());
          n.with_host_experts +=
              static_cast<int64_t>(e.resident.size() + e.copied.size()) < n_expert;
          n.copied_ahead += !e.copied.empty() && static_cast<int64_t>(e.copied.size()) <= k;
        }
      }
  return n;
}

// The session's expert uses against its plans: every routed expert of an expert-level
// block counted once, where it ran — k per block in a pass of one token, between k and
// min(E, tokens x k) otherwise; none for plans without such blocks; and the plans'
// expectation of host experts per pass.
void expect_expert_uses_add_up(const Schedule& s, const SessionStats& st, int64_t n_expert,
                               int64_t k) {
  for (const PlanUse& u : st.plans) {
    const SchedulePlan* plan = nullptr;
    for (size_t b = 0; b < s.budgets().size(); ++b)
      for (size_t c = 0; c < s.contexts().size(); ++c)
        for (size_t t = 0; t < s.tiers().size(); ++t) {
          const SchedulePlan& p = s.plan({b, t, c});
          if (p.budget_bytes == u.budget_bytes && p.tier == u.tier && p.context == u.context)
            plan = &p;
        }
    ASSERT_NE(plan, nullptr) << "a plan the session used is not in the schedule";
    const auto blocks = static_cast<uint64_t>(plan->experts.size());
    const auto passes = static_cast<uint64_t>(u.passes);
    const auto tokens = static_cast<uint64_t>(u.tokens);
    const uint64_t total = u.experts.total();
    if (u.tokens == u.passes) {
      EXPECT_EQ(total, blocks * passes * static_cast<uint64_t>(k)) << "tier " << u.tier;
    }
    EXPECT_GE(total, blocks * passes * static_cast<uint64_t>(k)) << "tier " << u.tier;
    EXPECT_LE(total, blocks * std::min(passes * static_cast<uint64_t>(n_expert),
                                       tokens * static_cast<uint64_t>(k)))
        << "tier " << u.tier;
    double expected = 0;
    for (const SchedulePlan::Experts& e : plan->experts)
      expected += e.expected_cpu_experts;
    EXPECT_NEAR(u.predicted_host_experts, expected * static_cast<double>(u.passes), 1e-6);
  }
}

class PlanInvariance : public ::testing::TestWithParam<std::string> {};

// "model" or "model:kvtype" (the KV cache type of the reference and of the schedule;
// default f16).
TEST_P(PlanInvariance, EveryPlanGivesTheCpuLogitsBitForBit) {
  const std::string param = GetParam();
  const size_t colon = param.find(':');
  const std::string path = invariance_model_path(param.substr(0, colon));
  const TensorType kv =
      colon == std::string::npos ? kDefaultKvType : parse_kv_type(param.substr(colon + 1)).value();
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto reference_session = CpuSession::create(**model, {kCtx, 2, 256, kv, kv});
  ASSERT_TRUE(reference_session.ok());
  Trace reference;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, kSteps, &reference));

  int plans = 0, streaming = 0, crossing = 0, routed = 0, switches = 0;
  SplitCounts split;
  ExpertUses uses; // of every emu run's expert-level blocks
  for (planner::Strategy strategy :
       {planner::Strategy::kAuto, planner::Strategy::kGpuOnly, planner::Strategy::kStatic,
        planner::Strategy::kDynamic, planner::Strategy::kLayers}) {
    auto compiled =
        compile_schedule(path, strategy, {1, 4, 16}, kCtx, {}, test_machine(), kContexts, kv);
    ASSERT_TRUE(compiled.ok()) << planner::strategy_name(strategy) << ": "
                               << compiled.status().to_string();
    const Schedule& sched = compiled->schedule;
    std::vector<int64_t> tiers = sched.tiers();
    tiers.push_back(0); // 0: look the plan up per pass (tier and context switches)
    for (uint64_t budget : sched.budgets())
      for (int64_t tier : tiers) {
        SCOPED_TRACE(std::string(planner::strategy_name(strategy)) + " budget " +
                     std::to_string(budget) + " tier " + (tier ? std::to_string(tier) : "lookup"));
        const HybridParams params = forced_params(kCtx, budget, tier);
        // cpu backend: the plan is looked up, every sub-layer runs on the host.
        auto on_cpu = HybridSession::create(**model, &sched, nullptr, params);
        ASSERT_TRUE(on_cpu.ok()) << on_cpu.status().to_string();
        Trace cpu_trace;
        ASSERT_OK(greedy_trace(**on_cpu, kPrompt, kSteps, &cpu_trace));
        EXPECT_TRUE(same_trace(reference, cpu_trace)) << "cpu backend";
        // emu backend with a capacity of exactly the budget.
        auto device = EmuDevice::create(fast_emu(std::max<uint64_t>(budget, 1)));
        ASSERT_TRUE(device.ok());
        auto on_emu = HybridSession::create(**model, &sched, device->get(), params);
        ASSERT_TRUE(on_emu.ok()) << on_emu.status().to_string();
        Trace emu_trace;
        ASSERT_OK(greedy_trace(**on_emu, kPrompt, kSteps, &emu_trace));
        EXPECT_TRUE(same_trace(reference, emu_trace)) << "emu backend";
        EXPECT_LE((*device)->peak_allocated_bytes(), budget);
        const SessionStats& st = (*on_emu)->stats();
        expect_expert_uses_add_up(sched, st, (*model)->hparams().n_expert,
                                  (*model)->hparams().n_expert_used);
        for (const PlanUse& u : (*on_cpu)->stats().plans) // the cpu backend splits nothing
          EXPECT_EQ(u.experts.total() + u.predicted_host_experts, 0);
        for (const PlanUse& u : st.plans)
          uses += u.experts;
        ++plans;
        streaming += st.bytes_streamed > 0;
        crossing += st.bytes_crossed > 0;
        switches += static_cast<int>(st.plan_switches);
        routed += count_partial_streams(sched, budget, tier);
        const SplitCounts here = count_splits(sched, budget, tier, (*model)->hparams().n_expert,
                                              (*model)->hparams().n_expert_used);
        split.blocks += here.blocks;
        split.resident += here.resident;
        split.copied += here.copied;
        split.with_host_experts += here.with_host_experts;
        split.copied_ahead += here.copied_ahead;
      }
  }
  std::cout << GetParam() << ": " << plans << " runs, " << streaming << " streamed weights, "
            << crossing << " crossed host/device, " << switches
            << " plan switches (tier or context range), " << routed
            << " streamed sub-layers that copy part of their weights (routed experts, "
               "gathered embedding rows)\n";
  EXPECT_GT(streaming, 0) << "no plan streamed weights: the test would not cover streaming";
  EXPECT_GT(crossing, 0);
  EXPECT_GT(switches, 0) << "no run switched plans mid-generation";
  if ((*model)->hparams().is_moe()) {
    EXPECT_GT(routed, 0) << "no plan streamed routed experts";
    std::cout << "  expert-level MoE blocks run: " << split.blocks << " (" << split.resident
              << " resident experts, " << split.copied << " copied on demand, "
              << split.with_host_experts << " blocks with experts on the host, "
              << split.copied_ahead << " copying theirs before routing); routed experts run "
              << uses.resident << " resident, " << uses.copied << " copied, " << uses.host
              << " on the host\n";
    // The 6-layer MoEs (8 experts) at their small budgets plan every kind of split.
    if (param.rfind("mk-", 0) == 0) {
      EXPECT_GT(split.resident, 0) << "no plan kept experts resident";
      EXPECT_GT(split.with_host_experts, 0) << "no plan ran experts on the host";
      EXPECT_GT(uses.resident, 0u) << "no run used a resident expert";
      EXPECT_GT(uses.host, 0u) << "no run used an expert on the host";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, PlanInvariance,
    ::testing::Values("stories260K.gguf", "stories260K-Q8_0-mixed.gguf",
                      "stories260K-moe4x2-exact.gguf", "stories260K-moe4x2-noise10.gguf",
                      "mk-dense6", "mk-moe6", "stories260K-qwen2.gguf", "stories260K-qwen3moe.gguf",
                      "mk-qwen2", "mk-qwen2vl", "mk-qwen3", "mk-qwen3moe", "mk-qwen2moe",
                      "mk-llama-bias-yarn", "mk-gemma3", "mk-gemma2", "mk-phi3", "mk-granite",
                      "mk-granitemoe", "mk-mistral3", "mk-smollm3", "mk-gpt-oss", "mk-glm4moe",
                      "mk-glm4", "mk-ernie4_5-moe", "mk-dots1", "mk-bailingmoe2", "mk-deepseek2",
                      "mk-deepseek2-kv-b", "mk-llama4", "mk-qwen3next", "mk-qwen3next-ssm-in",
                      "mk-qwen35", "mk-gemma3:q8_0", "mk-qwen3:q8_0", "mk-qwen3moe:q8_0",
                      "stories260K.gguf:f32"),
    model_param_name);

} // namespace
} // namespace pshard
