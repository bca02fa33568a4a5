// Batch invariance of the batched hybrid engine: on the cpu backend (plans looked up, run
// on the host) and on emu, for every plan of schedules compiled for the sequences served
// (several budgets, tiers 1, 4, 16, 64, each forced and looked up per pass; searched
// plans and forced strategies), sequences of mixed prompt lengths prefilled in chunks
// between the others' decode steps each get — bit for bit — the logits of the same
// sequence decoded alone by a CpuSession. And the engine refuses more sequences than a
// schedule's resident attention has device KV pages for, naming --parallel.
#include "runtime/batch/batched_hybrid_session.h"
#include "tests/runtime/batch/batch_script.h"
#include "tests/runtime/executor/executor_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 64;
constexpr int kSequences = 12;

BatchParams batch_params(int64_t sequences) {
  BatchParams bp;
  bp.max_sequences = sequences;
  bp.n_ctx = kCtx;
  bp.max_batch_tokens = 64;
  bp.page_tokens = 16;
  bp.n_threads = 2;
  return bp;
}

BatchedHybridOptions at(uint64_t budget, int64_t tier) {
  BatchedHybridOptions o;
  o.vram_budget = budget;
  o.force_tier = tier;
  return o;
}

bool keeps_attention_resident(const Model& m, const SchedulePlan& p) {
  for (size_t i = 0; i < m.sublayers().size(); ++i)
    if (m.sublayers()[i].kind == SubLayerKind::kAttention &&
        p.placements[i] == fb::schedule::Placement::GpuResident)
      return true;
  return false;
}

class BatchHybridInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchHybridInvariance, EverySequenceGetsItsLogitsAloneOnEveryPlan) {
  const std::string path = invariance_model_path(GetParam(), "batch-");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Script script = make_script(kSequences, 4, (*model)->hparams().n_vocab, 5u);
  const Rows want = alone(
      [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(**model, {kCtx, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(s));
      },
      script);
  int runs = 0, streamed = 0, resident_kv = 0, tier16 = 0;
  for (planner::Strategy strategy :
       {planner::Strategy::kAuto, planner::Strategy::kGpuOnly, planner::Strategy::kStatic}) {
    auto compiled = compile_schedule(path, strategy, {1, 4, 16, 64}, kCtx, {}, test_machine(), {},
                                     kDefaultKvType, kSequences);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const Schedule& sched = compiled->schedule;
    std::vector<int64_t> tiers = sched.tiers();
    tiers.push_back(0); // 0: looked up per pass, its tier the pass's total new tokens
    for (size_t b = 0; b < sched.budgets().size(); ++b)
      for (int64_t tier : tiers)
        for (bool emu : {false, true}) {
          const uint64_t budget = sched.budgets()[b];
          SCOPED_TRACE(std::string(planner::strategy_name(strategy)) + " budget " +
                       std::to_string(budget) + " tier " +
                       (tier ? std::to_string(tier) : "lookup") + (emu ? " emu" : " cpu"));
          std::unique_ptr<Device> device = emu_or_none(emu, budget);
          auto engine = BatchedHybridSession::create(**model, &sched, std::move(device),
                                                     batch_params(kSequences), at(budget, tier));
          ASSERT_TRUE(engine.ok()) << engine.status().to_string();
          EXPECT_TRUE(same_rows(want, batched(**engine, script, (*engine)->max_batch_tokens())));
          EXPECT_EQ((*engine)->kv_pages().used_pages, 0);
          const BatchEngineStats st = (*engine)->stats();
          EXPECT_LE(st.sessions.peak_device_bytes, budget);
          ++runs;
          streamed += st.sessions.bytes_streamed > 0;
          for (const PlanUse& u : st.sessions.plans)
            tier16 += u.tier == 16 && tier == 0;
          for (size_t t = 0; t < sched.tiers().size(); ++t)
            resident_kv += emu && keeps_attention_resident(**model, sched.plan({b, t, 0}));
        }
  }
  std::cout << GetParam() << ": " << runs << " runs, " << streamed << " streamed weights, "
            << resident_kv << " resident attention plans with device KV pages\n";
  EXPECT_GT(streamed, 0) << "no plan streamed: the test would not cover streaming";
  EXPECT_GT(resident_kv, 0) << "no plan kept attention resident: no device KV pages ran";
  EXPECT_GT(tier16, 0) << "no looked-up pass of 12 sequences took the tier-16 plan";
}

INSTANTIATE_TEST_SUITE_P(Models, BatchHybridInvariance,
                         ::testing::Values("mk-dense6", "mk-qwen3moe", "mk-glm4moe", "mk-deepseek2",
                                           "mk-llama4", "stories260K-Q8_0-mixed.gguf"),
                         model_param_name);

// The upper end: 64 sequences at once on emu, every budget of an auto schedule
// compiled for 64, plans looked up per pass (so the decode steps run the tier-64 plan).
TEST(BatchHybridSession, SixtyFourSequencesOnEmuGetTheirLogitsAlone) {
  const std::string path = invariance_model_path("mk-dense6", "batch-");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  constexpr int kMany = 64;
  const Script script = make_script(kMany, 3, (*model)->hparams().n_vocab, 11u);
  const Rows want = alone(
      [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(**model, {kCtx, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(s));
      },
      script);
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16, 64}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, kMany);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  int tier64 = 0;
  for (uint64_t budget : sched.budgets()) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    auto d = EmuDevice::create(fast_emu(std::max<uint64_t>(budget, 1)));
    ASSERT_TRUE(d.ok());
    auto engine = BatchedHybridSession::create(**model, &sched, std::move(d).value(),
                                               batch_params(kMany), at(budget, 0));
    ASSERT_TRUE(engine.ok()) << engine.status().to_string();
    EXPECT_TRUE(same_rows(want, batched(**engine, script, (*engine)->max_batch_tokens())));
    for (const PlanUse& u : (*engine)->stats().sessions.plans)
      tier64 += u.tier == 64;
  }
  EXPECT_GT(tier64, 0) << "no pass of 64 sequences took the tier-64 plan";
}

TEST(BatchHybridSession, RefusesMoreSequencesThanTheDeviceKvPagesHold) {
  const std::string path = invariance_model_path("mk-dense6", "batch-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kStatic, {1, 4}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, 2);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  const uint64_t budget = sched.budgets().back();
  auto device = EmuDevice::create(fast_emu(budget));
  ASSERT_TRUE(device.ok());
  auto refused = BatchedHybridSession::create(**model, &sched, std::move(device).value(),
                                              batch_params(3), at(budget, 0));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--parallel 3"), std::string::npos)
      << refused.status().to_string();
  device = EmuDevice::create(fast_emu(budget));
  ASSERT_TRUE(device.ok());
  EXPECT_TRUE(BatchedHybridSession::create(**model, &sched, std::move(device).value(),
                                           batch_params(2), at(budget, 0))
                  .ok());
}

} // namespace
} // namespace pshard
