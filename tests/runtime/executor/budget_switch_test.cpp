// Budget changes during a long generation: at random between passes the VRAM budget
// moves (up, down, to zero, to values between compiled budgets), while the passes switch
// tiers and the context crosses range after range. The tokens and logits must not
// change, and the emulated GPU — whose hard capacity the test lowers to the budget in
// force — must never hold more than that budget. A switch between the plans of one
// budget moves exactly the bytes the schedule recorded for it.
#include "executor_test_util.h"

#include <map>
#include <random>

namespace pshard {
namespace {

using namespace pshard::testing;

const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378};

// Sets the budget the way an app shares a GPU: when lowering, the memory is given back
// before the lower capacity applies; when raising, the capacity grows first.
void change_budget(HybridSession& s, EmuDevice& d, uint64_t budget, uint64_t memory) {
  const uint64_t old = s.budget();
  if (budget > old)
    ASSERT_OK(d.set_capacity(std::min(std::max<uint64_t>(budget, 1), memory)));
  d.reset_peak();
  ASSERT_OK(s.set_budget(budget));
  EXPECT_LE(d.peak_allocated_bytes(), std::max(old, budget)) << "during the switch";
  EXPECT_LE(d.arena_bytes(), budget) << "after the switch";
  ASSERT_OK(d.set_capacity(std::min(std::max<uint64_t>(budget, 1), memory)));
  d.reset_peak();
}

void run_random_budgets(const std::string& path, planner::Strategy strategy, uint32_t seed) {
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  constexpr int64_t kCtx = 160;
  constexpr int kSteps = 120;
  auto reference_session = CpuSession::create(**model, {kCtx, 2, 256});
  ASSERT_TRUE(reference_session.ok());
  Trace reference;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, kSteps, &reference));

  auto compiled =
      compile_schedule(path, strategy, {1, 4, 16}, kCtx, {}, test_machine(), {24, 64, kCtx});
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  std::vector<uint64_t> choices(sched.budgets().begin(), sched.budgets().end());
  choices.push_back(0);                                   // everything back to the CPU
  for (size_t i = 0; i + 1 < sched.budgets().size(); ++i) // between compiled budgets
    choices.push_back((sched.budgets()[i] + sched.budgets()[i + 1]) / 2);
  const uint64_t memory = sched.budgets().back();

  auto device = EmuDevice::create(fast_emu(memory));
  ASSERT_TRUE(device.ok());
  EmuDevice& d = **device;
  HybridParams params;
  params.n_ctx = kCtx;
  params.n_threads = 2;
  params.vram_budget = sched.budgets().back();
  auto session = HybridSession::create(**model, &sched, &d, params);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  HybridSession& s = **session;

  std::mt19937 rng(seed);
  Trace got;
  auto logits = s.decode(kPrompt);
  ASSERT_TRUE(logits.ok()) << logits.status().to_string();
  for (int i = 0; i < kSteps; ++i) {
    got.logits.emplace_back(logits->begin(), logits->end());
    const TokenId next = argmax(*logits);
    got.tokens.push_back(next);
    if (i + 1 == kSteps)
      break;
    if (rng() % 3 == 0) {
      change_budget(s, d, choices[rng() % choices.size()], memory);
      if (::testing::Test::HasFatalFailure())
        return;
    }
    if (rng() % 9 == 0) {
      // A pass of another tier (three tokens), then forgotten: the next pass rewrites its
      // positions, so the trace stays the reference's.
      const std::vector<TokenId> burst = {next, 290, 311};
      const auto burst_logits = s.decode(burst);
      ASSERT_TRUE(burst_logits.ok()) << burst_logits.status().to_string();
      ASSERT_TRUE(s.rewind(s.n_past() - 3).ok());
    }
    logits = s.decode(std::span<const TokenId>(&next, 1));
    ASSERT_TRUE(logits.ok()) << logits.status().to_string();
    EXPECT_LE(d.peak_allocated_bytes(), s.budget()) << "during pass " << i;
  }
  EXPECT_TRUE(same_trace(reference, got));
  EXPECT_GT(s.stats().budget_switches, 10);
  EXPECT_GT(s.stats().plan_switches, 0) << "no tier or context switch happened";
  std::cout << path << ": " << s.stats().budget_switches << " budget switches, "
            << s.stats().plan_switches << " tier or context switches, " << s.stats().bytes_switched
            << " B moved by them, " << s.stats().bytes_streamed << " B streamed\n";
}

TEST(BudgetSwitch, RandomBudgetsKeepTokensAndStayWithinBudget) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  run_random_budgets(path, planner::Strategy::kAuto, 1);
  run_random_budgets(path, planner::Strategy::kDynamic, 2);
}

TEST(BudgetSwitch, MoeModelKeepsTokensAcrossBudgets) {
  const std::string path = shared_model("stories260K-moe4x2-noise10.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  run_random_budgets(path, planner::Strategy::kGpuOnly, 3);
}

// Expert-level MoE plans (auto, uniform routing) under random budget changes: resident
// experts come and go with the budget, routed ones are copied or run on the host.
TEST(BudgetSwitch, ExpertLevelMoeKeepsTokensAcrossBudgets) {
  for (const char* name : {"mk-moe6", "mk-qwen2moe"}) {
    const std::string path = invariance_model_path(name, "budget-");
    PSHARD_SKIP_IF_MISSING(path);
    auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, 160, {},
                                     test_machine(), {24, 64, 160});
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    size_t split = 0;
    for (size_t b = 0; b < compiled->schedule.budgets().size(); ++b)
      split += compiled->schedule.plan({b, 0}).experts.size();
    EXPECT_GT(split, 0u) << name << ": no decode plan is expert-level";
    run_random_budgets(path, planner::Strategy::kAuto, 4);
  }
}

// Sliding-window models whose schedule keeps local layers' caches as rings of 32
// positions (kv_ring.h): the rings wrap many times over 120 steps while budget changes
// evict them to the host and upload them back, and a burst's rewind stays inside them.
TEST(BudgetSwitch, SlidingWindowRingsKeepTokensAcrossBudgets) {
  for (const char* name : {"mk-gemma3", "mk-gpt-oss"}) {
    const std::string path = invariance_model_path(name, "budget-");
    auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, 160);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_EQ(compiled->schedule.kv_ring_positions(), 32) << name;
    run_random_budgets(path, planner::Strategy::kAuto, 5);
  }
}

// A tier switch moves exactly what the schedule recorded for it: the weights the next
// plan adds, and the cached positions of every KV cache that enters or leaves the
// device. The machine makes decode and a 16-token prefill want different resident sets.
TEST(BudgetSwitch, TierSwitchesMoveExactlyTheRecordedBytes) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 16}, 64);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  size_t budget = sched.budgets().size();
  for (size_t b = 0; b < sched.budgets().size() && budget == sched.budgets().size(); ++b)
    if (sched.find_switch(b, {b, 1, 0}, {b, 0, 0}) && sched.find_switch(b, {b, 0, 0}, {b, 1, 0}))
      budget = b;
  ASSERT_LT(budget, sched.budgets().size())
      << "no budget gives decode and prefill different resident sets: nothing to test";
  const ScheduleSwitch& to_decode = *sched.find_switch(budget, {budget, 1, 0}, {budget, 0, 0});
  const ScheduleSwitch& to_prefill = *sched.find_switch(budget, {budget, 0, 0}, {budget, 1, 0});
  auto device = EmuDevice::create(fast_emu(sched.budgets()[budget]));
  ASSERT_TRUE(device.ok());
  HybridParams params;
  params.n_ctx = 64;
  params.n_threads = 1;
  params.vram_budget = sched.budgets()[budget];
  auto session = HybridSession::create(**model, &sched, device->get(), params);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  HybridSession& s = **session;
  const std::vector<TokenId> prompt = {1, 403, 407, 261, 378, 290, 311, 1, 403, 407};
  ASSERT_TRUE(s.decode(prompt).ok()); // tier 16 (the first pass uploads its plan)
  const int64_t cached = s.n_past();
  uint64_t before = s.stats().bytes_switched;
  const TokenId next = 290;
  ASSERT_TRUE(s.decode(std::span<const TokenId>(&next, 1)).ok()); // tier 1: a switch
  const auto positions = static_cast<uint64_t>(cached);
  EXPECT_EQ(s.stats().bytes_switched - before,
            to_decode.upload_bytes + (to_decode.kv_upload_bytes_per_position +
                                      to_decode.kv_download_bytes_per_position) *
                                         positions);
  before = s.stats().bytes_switched;
  ASSERT_TRUE(s.decode(prompt).ok()); // tier 16 again
  EXPECT_EQ(s.stats().bytes_switched - before,
            to_prefill.upload_bytes + (to_prefill.kv_upload_bytes_per_position +
                                       to_prefill.kv_download_bytes_per_position) *
                                          static_cast<uint64_t>(cached + 1));
  EXPECT_GE(s.stats().plan_switches, 2);
  EXPECT_GT(to_decode.upload_bytes + to_prefill.upload_bytes, 0u);
  EXPECT_GT(s.stats().switch_ms, 0.0);
  EXPECT_LE((*device)->peak_allocated_bytes(), sched.budgets()[budget]);
}

// Raising the budget step by step uploads only what the larger budget adds: greedy
// (static) resident sets nest, the planner keeps a smaller budget's buffers at their
// offsets, and the switch leaves those in place. Before any pass the KV caches are
// empty, so every byte a switch moves is a weight the smaller budget did not hold.
TEST(BudgetSwitch, RaisingTheBudgetUploadsOnlyTheNewWeights) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kStatic, {1, 4}, 64);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  ASSERT_GE(sched.budgets().size(), 3u);
  auto weights_of = [&](size_t b) {
    std::map<std::pair<int32_t, int32_t>, uint64_t> w;
    for (const auto& buf : sched.plan({b, 0}).vram_layout)
      if (buf.kind == fb::schedule::BufferKind::Weights)
        w[{buf.sublayer, buf.index}] = buf.size;
    return w;
  };
  auto device = EmuDevice::create(fast_emu(sched.budgets().back()));
  ASSERT_TRUE(device.ok());
  HybridParams params;
  params.n_ctx = 64;
  params.n_threads = 1;
  params.vram_budget = sched.budgets().front();
  auto session = HybridSession::create(**model, &sched, device->get(), params);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  HybridSession& s = **session;
  uint64_t uploaded_total = 0;
  for (size_t b = 1; b < sched.budgets().size(); ++b) {
    const auto held = weights_of(b - 1), next = weights_of(b);
    uint64_t added = 0;
    for (const auto& [key, bytes] : next)
      if (!held.count(key))
        added += bytes;
    const uint64_t before = s.stats().bytes_switched;
    ASSERT_OK(s.set_budget(sched.budgets()[b]));
    EXPECT_EQ(s.stats().bytes_switched - before, added)
        << "budget " << sched.budgets()[b - 1] << " -> " << sched.budgets()[b];
    uploaded_total += added;
  }
  EXPECT_GT(uploaded_total, 0u);
  // And the weights in place are right: the session still gives the CPU's tokens.
  auto reference = CpuSession::create(**model, {64, 1, 256});
  ASSERT_TRUE(reference.ok());
  Trace want, got;
  ASSERT_OK(greedy_trace(**reference, kPrompt, 8, &want));
  ASSERT_OK(greedy_trace(s, kPrompt, 8, &got));
  EXPECT_TRUE(same_trace(want, got));
}

} // namespace
} // namespace pshard
