// Sliding-window layers' own KV pages (runtime/batch/window_pages.h) keep batch
// invariance: on Gemma 2 and 3 and gpt-oss shapes (windows of 5 and 7 positions, prompts of
// up to 40), sequences prefilled in chunks between the others' decode steps hold only their
// last window's pages for those layers and still get — bit for bit — the logits of the same
// sequence decoded alone by a CpuSession: on the batched CPU engine, with and without
// --swa-full, and on the batched hybrid engine under every plan of auto and GPU-only
// schedules, on cpu and on emu (where resident attention keeps device pages of both pools
// and plan switches move them).
#include "runtime/batch/batched_hybrid_session.h"
#include "tests/runtime/batch/batch_script.h"
#include "tests/runtime/executor/executor_test_util.h"

#include <random>

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 128; // room for a window pool smaller than the full one
constexpr int kSequences = 10;

BatchParams window_batch(bool swa_full = false) {
  BatchParams bp;
  bp.max_sequences = kSequences;
  bp.n_ctx = kCtx;
  bp.max_batch_tokens = 16; // a window pool of 20 pages a sequence and 4, against 32
  bp.page_tokens = 4;
  bp.n_threads = 2;
  bp.swa_full = swa_full;
  return bp;
}

struct Loaded {
  std::unique_ptr<Model> model;
  Script script;
  Rows want;
};

void load(const std::string& path, Loaded* l) {
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  l->model = std::move(*model);
  ASSERT_GT(widest_attention_window(l->model->hparams()), 0) << "a model with windows";
  l->script = make_script(kSequences, 6, l->model->hparams().n_vocab, 17u);
  l->want = alone(
      [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(*l->model, {kCtx, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(s));
      },
      l->script);
}

class BatchWindowInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchWindowInvariance, TheCpuEngineHoldsOnlyTheWindowsPages) {
  const std::string path = invariance_model_path(GetParam(), "batch-window-");
  PSHARD_SKIP_IF_MISSING(path);
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(load(path, &l));
  for (bool swa_full : {false, true}) {
    SCOPED_TRACE(swa_full ? "swa-full" : "window pages");
    auto engine = BatchedCpuSession::create(*l.model, window_batch(swa_full));
    ASSERT_TRUE(engine.ok()) << engine.status().to_string();
    EXPECT_TRUE(same_rows(l.want, batched(**engine, l.script, 16)));
    const KvPageStats kv = (*engine)->kv_pages();
    if (swa_full) {
      EXPECT_EQ(kv.window_total_pages, 0);
    } else {
      EXPECT_GT(kv.window_total_pages, 0);
      EXPECT_LT(kv.window_total_pages, kv.total_pages) << "a pool of a few windows";
    }
    EXPECT_EQ(kv.used_pages, 0);
    EXPECT_EQ(kv.window_used_pages, 0) << "closed sequences give their window pages back";
  }
}

TEST_P(BatchWindowInvariance, TheHybridEngineGetsTheLogitsAloneOnEveryPlan) {
  const std::string path = invariance_model_path(GetParam(), "batch-window-");
  PSHARD_SKIP_IF_MISSING(path);
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(load(path, &l));
  int runs = 0, resident_kv = 0;
  for (planner::Strategy strategy : {planner::Strategy::kAuto, planner::Strategy::kGpuOnly}) {
    auto compiled = compile_schedule(path, strategy, {1, 4, 16}, kCtx, {}, test_machine(), {},
                                     kDefaultKvType, kSequences);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const Schedule& sched = compiled->schedule;
    for (size_t b = 0; b < sched.budgets().size(); ++b)
      for (bool emu : {false, true}) {
        const uint64_t budget = sched.budgets()[b];
        SCOPED_TRACE(std::string(planner::strategy_name(strategy)) + " budget " +
                     std::to_string(budget) + (emu ? " emu" : " cpu"));
        BatchedHybridOptions o;
        o.vram_budget = budget;
        auto engine = BatchedHybridSession::create(*l.model, &sched, emu_or_none(emu, budget),
                                                   window_batch(), o);
        ASSERT_TRUE(engine.ok()) << engine.status().to_string();
        EXPECT_TRUE(same_rows(l.want, batched(**engine, l.script, (*engine)->max_batch_tokens())));
        const KvPageStats kv = (*engine)->kv_pages();
        EXPECT_GT(kv.window_total_pages, 0);
        EXPECT_EQ(kv.window_total_pages * kv.page_tokens, sched.kv_ring_positions())
            << "the pool the schedule sized the device caches for";
        EXPECT_EQ(kv.window_used_pages, 0);
        EXPECT_LE((*engine)->stats().sessions.peak_device_bytes, budget);
        ++runs;
        for (size_t t = 0; t < sched.tiers().size(); ++t)
          for (size_t i = 0; i < l.model->sublayers().size(); ++i)
            resident_kv += emu && l.model->sublayers()[i].kind == SubLayerKind::kAttention &&
                           sched.plan({b, t, 0}).placements[i] ==
                               fb::schedule::Placement::GpuResident;
      }
  }
  std::cout << GetParam() << ": " << runs << " runs, " << resident_kv
            << " resident attention sub-layers on emu\n";
  EXPECT_GT(resident_kv, 0) << "no plan kept attention resident: no device window pages ran";
}

// Speculative decoding's pattern over window pages: each step's pass carries the next
// token and two drafted ones, then the sequence rewinds past the drafts (to its pass's
// start + 1). The logits of every kept token are still the ones it gets alone, on the CPU
// engine and on emu under a GPU-only schedule (device window pages).
Rows drafted(BatchDecoder& engine, const Script& s, std::mt19937& rng) {
  Rows out;
  for (const auto& prompt : s.prompts) {
    auto seq = engine.open_sequence();
    EXPECT_TRUE(seq.ok()) << seq.status().to_string();
    if (!seq.ok())
      return out;
    std::vector<TokenId> kept;
    std::vector<std::vector<float>> rows;
    for (size_t at = 0; at < prompt.size(); at += 16) {
      std::vector<BatchEntry> pass;
      for (size_t i = at; i < std::min(prompt.size(), at + 16); ++i)
        pass.push_back({*seq, prompt[i], i + 1 == prompt.size()});
      auto l = engine.decode(pass);
      EXPECT_TRUE(l.ok()) << l.status().to_string();
      if (!l.ok())
        return out;
      if (pass.back().logits)
        rows.emplace_back(l->row(0).begin(), l->row(0).end());
    }
    kept = prompt;
    while (static_cast<int>(rows.size()) < s.generate) {
      const TokenId next = batch_argmax(rows.back());
      const std::vector<BatchEntry> pass = {
          {*seq, next, true},
          {*seq, static_cast<TokenId>(rng() % engine.n_vocab()), false},
          {*seq, static_cast<TokenId>(rng() % engine.n_vocab()), false}};
      auto l = engine.decode(pass);
      EXPECT_TRUE(l.ok()) << l.status().to_string();
      if (!l.ok())
        return out;
      rows.emplace_back(l->row(0).begin(), l->row(0).end());
      kept.push_back(next);
      const Status st = engine.rewind_sequence(*seq, kept);
      EXPECT_TRUE(st.ok()) << st.to_string();
    }
    engine.close_sequence(*seq);
    out.push_back(std::move(rows));
  }
  return out;
}

TEST_P(BatchWindowInvariance, RewindsPastDraftedTokensKeepTheLogitsAlone) {
  const std::string path = invariance_model_path(GetParam(), "batch-window-");
  PSHARD_SKIP_IF_MISSING(path);
  Loaded l;
  ASSERT_NO_FATAL_FAILURE(load(path, &l));
  std::mt19937 rng(3);
  auto cpu = BatchedCpuSession::create(*l.model, window_batch());
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  EXPECT_TRUE(same_rows(l.want, drafted(**cpu, l.script, rng)));
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1, 4, 16}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, kSequences);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const uint64_t budget = compiled->schedule.budgets().back();
  BatchedHybridOptions o;
  o.vram_budget = budget;
  auto emu = BatchedHybridSession::create(*l.model, &compiled->schedule,
                                          emu_or_none(true, budget), window_batch(), o);
  ASSERT_TRUE(emu.ok()) << emu.status().to_string();
  EXPECT_TRUE(same_rows(l.want, drafted(**emu, l.script, rng)));
}

// A schedule's sliding-window device caches hold the window pages of the sequences it was
// compiled for: an engine for more is refused, naming the fix; one for them is not.
TEST(BatchWindowPages, MoreSequencesThanTheScheduleSizedTheWindowPoolForAreRefused) {
  const std::string path = invariance_model_path("mk-gemma3", "batch-window-");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1, 4, 16}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, 2);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  ASSERT_GT(sched.kv_ring_positions(), 0);
  const uint64_t budget = sched.budgets().back();
  BatchedHybridOptions o;
  o.vram_budget = budget;
  auto refused =
      BatchedHybridSession::create(**model, &sched, emu_or_none(true, budget), window_batch(), o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--parallel 10"), std::string::npos)
      << refused.status().to_string();
  BatchParams two = window_batch();
  two.max_sequences = 2;
  two.page_tokens = kKvPageTokens;
  auto served = BatchedHybridSession::create(**model, &sched, emu_or_none(true, budget), two, o);
  ASSERT_TRUE(served.ok()) << served.status().to_string();
  two.swa_full = true;
  auto whole = BatchedHybridSession::create(**model, &sched, emu_or_none(true, budget), two, o);
  ASSERT_FALSE(whole.ok()) << "whole caches do not fit the schedule's window pool";
  EXPECT_NE(whole.status().message().find("--swa-full"), std::string::npos)
      << whole.status().to_string();
}

INSTANTIATE_TEST_SUITE_P(Models, BatchWindowInvariance,
                         ::testing::Values("mk-gemma3", "mk-gemma2", "mk-gpt-oss"),
                         model_param_name);

} // namespace
} // namespace pshard
