// Sliding-window layers' caches as rings (runtime/model/kv_ring.h): a session whose
// local layers keep only window + largest pass - 1 positions gives the logits of one that
// keeps every position, bit for bit, long after the ring has wrapped — on the CPU, and on
// the cpu and emu backends under a schedule whose device caches are rings too (moves
// between plans copying the ring's rows, as the compiler recorded). A rewind is refused
// where the ring no longer holds the window before it.
#include "executor_test_util.h"
#include "runtime/model/kv_ring.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 128;
constexpr int kSteps = 60; // 20 prompt tokens + 60: the rings below wrap several times

std::vector<TokenId> prompt() {
  std::vector<TokenId> p;
  for (int i = 0; i < 20; ++i)
    p.push_back(static_cast<TokenId>(2 + (i * 37) % 400));
  return p;
}

// Every position of the context in one pass: no ring (it would not be shorter).
Result<Trace> whole_cache_trace(const Model& model) {
  PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(model, {kCtx, 2, kCtx}));
  EXPECT_EQ(kv_ring_positions(widest_attention_window(model.hparams()), kCtx, kCtx), 0);
  Trace t;
  PSHARD_RETURN_IF_ERROR(greedy_trace(*s, prompt(), kSteps, &t));
  return t;
}

class KvRings : public ::testing::TestWithParam<std::string> {};

TEST_P(KvRings, ACpuSessionsRingsGiveTheWholeCachesLogits) {
  auto model = Model::load(invariance_model_path(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const ModelHParams& hp = (*model)->hparams();
  const int64_t window = widest_attention_window(hp);
  ASSERT_GT(window, 0);
  auto want = whole_cache_trace(**model);
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  // Passes of 4 tokens: rings of 16 rows (window + 3, rounded up).
  auto ringed = CpuSession::create(**model, {kCtx, 2, 4});
  ASSERT_TRUE(ringed.ok());
  Trace got;
  ASSERT_OK(greedy_trace(**ringed, prompt(), kSteps, &got));
  EXPECT_TRUE(same_trace(*want, got));

  // The host cache of a session without a schedule: local layers hold their ring only.
  HybridParams params;
  params.n_ctx = kCtx;
  params.n_threads = 2;
  params.n_batch = 4;
  auto hybrid = HybridSession::create(**model, nullptr, nullptr, params);
  ASSERT_TRUE(hybrid.ok());
  const KvCache& kv = (*hybrid)->host_kv();
  EXPECT_EQ(kv.widest_ring(), 16);
  int64_t rows = 0, local = 0;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const bool is_local = hp.attention_window(il) > 0;
    EXPECT_EQ(kv.ring(il), is_local ? 16 : 0) << "layer " << il;
    rows += is_local ? 16 : kCtx;
    local += is_local;
  }
  ASSERT_GT(local, 0);
  EXPECT_EQ(kv.bytes(), kv.k_bytes(rows) + kv.v_bytes(rows));
  Trace hybrid_trace;
  ASSERT_OK(greedy_trace(**hybrid, prompt(), kSteps, &hybrid_trace));
  EXPECT_TRUE(same_trace(*want, hybrid_trace));
}

// Dropping positions: back to where the ring still holds the window (speculative
// decoding's drafts), the next logits are the whole cache's; further back is refused
// and names what works; 0 starts afresh.
TEST_P(KvRings, ARewindStaysWhereTheRingHoldsTheWindow) {
  auto model = Model::load(invariance_model_path(GetParam()));
  ASSERT_TRUE(model.ok());
  auto want = whole_cache_trace(**model);
  ASSERT_TRUE(want.ok());
  auto s = CpuSession::create(**model, {kCtx, 2, 4});
  ASSERT_TRUE(s.ok());
  const std::vector<TokenId> p = prompt();
  const int64_t window = widest_attention_window((*model)->hparams());
  ASSERT_TRUE((*s)->decode(p).ok());
  for (int i = 0; i < 30; ++i) // n_past 20 + 30 = 50
    ASSERT_TRUE(
        (*s)->decode(std::span<const TokenId>(&want->tokens[static_cast<size_t>(i)], 1)).ok());
  const int64_t n_past = (*s)->n_past();
  const int64_t floor = kv_ring_rewind_floor(16, window, n_past);
  ASSERT_GT(floor, 0);

  const Status too_far = (*s)->rewind(floor - 1);
  EXPECT_EQ(too_far.code(), StatusCode::kOutOfRange);
  EXPECT_NE(too_far.message().find("rewind to 0"), std::string::npos) << too_far.message();
  EXPECT_EQ((*s)->n_past(), n_past) << "a refused rewind changed the session";

  // Back to the floor, then the same tokens again: the reference's logits.
  ASSERT_OK((*s)->rewind(floor));
  const auto step = static_cast<size_t>(floor - static_cast<int64_t>(p.size()));
  for (size_t i = step; i < 30; ++i) {
    auto l = (*s)->decode(std::span<const TokenId>(&want->tokens[i], 1));
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(std::vector<float>(l->begin(), l->end()), want->logits[i + 1]) << "step " << i + 1;
  }
  // The high-water mark stays: positions written before the rewind overwrote rows too.
  EXPECT_EQ((*s)->rewind(floor - 1).code(), StatusCode::kOutOfRange);

  ASSERT_OK((*s)->rewind(0));
  auto again = (*s)->decode(p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::vector<float>(again->begin(), again->end()), want->logits[0]);
}

// A schedule's device caches for local layers are rings (CompileOptions.kv_ring): every
// budget, looking plans up per pass (tier switches after the prompt, the context range
// crossed at 48 positions with more than a ring cached), runs the whole cache's tokens.
TEST_P(KvRings, EveryPlanOfARingScheduleGivesTheWholeCachesLogits) {
  const std::string path = invariance_model_path(GetParam());
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok());
  auto want = whole_cache_trace(**model);
  ASSERT_TRUE(want.ok());
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, kCtx, {},
                                   test_machine(), {48, kCtx});
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  const ModelHParams& hp = (*model)->hparams();
  const int64_t ring = sched.kv_ring_positions();
  EXPECT_EQ(ring, kv_ring_positions(widest_attention_window(hp), 16, kCtx));
  ASSERT_EQ(ring, 32);

  int switches = 0, ring_buffers = 0, ring_switches = 0;
  for (size_t b = 0; b < sched.budgets().size(); ++b) {
    const uint64_t budget = sched.budgets()[b];
    SCOPED_TRACE("budget " + std::to_string(budget));
    for (const ScheduleSwitch& sw : sched.switches(b))
      ring_switches += sw.kv_ring_upload_bytes_per_position > 0;
    for (bool emu : {false, true}) {
      std::unique_ptr<Device> device = emu_or_none(emu, budget);
      auto s = HybridSession::create(**model, &sched, device.get(), forced_params(kCtx, budget, 0));
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      Trace got;
      ASSERT_OK(greedy_trace(**s, prompt(), kSteps, &got));
      EXPECT_TRUE(same_trace(*want, got)) << (emu ? "emu" : "cpu") << " backend";
      switches += static_cast<int>((*s)->stats().plan_switches);
      if (!emu)
        continue;
      // The device caches of local layers hold the ring's rows, the others the range's.
      const KvCache& kv = (*s)->host_kv();
      for (size_t c = 0; c < sched.contexts().size(); ++c)
        for (size_t t = 0; t < sched.tiers().size(); ++t)
          for (const SchedulePlan::Buffer& buf : sched.plan({b, t, c}).vram_layout) {
            if (buf.kind != fb::schedule::BufferKind::KvCache)
              continue;
            const int64_t il = (*model)->sublayers()[static_cast<size_t>(buf.sublayer)].layer;
            const int64_t held = kv.rows_held(il, sched.contexts()[c]);
            EXPECT_EQ(buf.size, kv.k_bytes(held) + kv.v_bytes(held)) << "layer " << il;
            ring_buffers += hp.attention_window(il) > 0 && sched.contexts()[c] > ring;
          }
    }
  }
  EXPECT_GT(switches, 0) << "no run switched plans";
  EXPECT_GT(ring_buffers, 0) << "no plan kept a local layer's ring on the device";
  EXPECT_GT(ring_switches, 0) << "no recorded switch moved a ring";
}

// swa_full: whole caches without a schedule (any rewind works), and a ring schedule
// refused with the fix named.
TEST_P(KvRings, SwaFullKeepsWholeCaches) {
  const std::string path = invariance_model_path(GetParam());
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok());
  auto want = whole_cache_trace(**model);
  ASSERT_TRUE(want.ok());
  HybridParams params;
  params.n_ctx = kCtx;
  params.n_threads = 2;
  params.n_batch = 4;
  params.swa_full = true;
  auto s = HybridSession::create(**model, nullptr, nullptr, params);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->host_kv().widest_ring(), 0);
  Trace got;
  ASSERT_OK(greedy_trace(**s, prompt(), kSteps, &got));
  EXPECT_TRUE(same_trace(*want, got));
  ASSERT_OK((*s)->rewind(21)); // far behind any ring's floor
  auto l = (*s)->decode(std::span<const TokenId>(&want->tokens[1], 1));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(std::vector<float>(l->begin(), l->end()), want->logits[2]);

  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, kCtx);
  ASSERT_TRUE(compiled.ok());
  ASSERT_GT(compiled->schedule.kv_ring_positions(), 0);
  auto refused = HybridSession::create(**model, &compiled->schedule, nullptr, params);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("pshard-compile --swa-full"), std::string::npos)
      << refused.status().message();
}

INSTANTIATE_TEST_SUITE_P(Models, KvRings, ::testing::Values("mk-gemma3", "mk-gemma2", "mk-gpt-oss"),
                         model_param_name);

} // namespace
} // namespace pshard
