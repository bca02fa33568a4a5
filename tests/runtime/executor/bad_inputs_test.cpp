// Bad inputs get clear errors and leave the session usable: an artifact for another
// model, a corrupt or truncated artifact, a budget below the smallest plan (at creation
// and as a change), a context longer than compiled for, a device smaller than a budget.
#include "executor_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378};

struct Fixture {
  std::unique_ptr<Model> model;
  Compiled compiled;
};

std::optional<Fixture> load(const std::string& name) {
  const std::string path = shared_model(name);
  if (!std::filesystem::exists(path))
    return std::nullopt;
  auto model = Model::load(path);
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, 64);
  EXPECT_TRUE(model.ok() && compiled.ok());
  if (!model.ok() || !compiled.ok())
    return std::nullopt;
  return Fixture{std::move(model).value(), std::move(compiled).value()};
}

HybridParams params_with(uint64_t budget) {
  HybridParams p;
  p.n_ctx = 64;
  p.n_threads = 1;
  p.vram_budget = budget;
  return p;
}

TEST(BadInputs, ArtifactForAnotherModelIsRefusedNamingBothFingerprints) {
  auto f = load("stories260K.gguf");
  auto other = Model::load(shared_model("stories260K-F16.gguf"));
  if (!f || !other.ok())
    GTEST_SKIP() << "shared models are not present";
  auto s = HybridSession::create(**other, &f->compiled.schedule, nullptr,
                                 params_with(f->compiled.schedule.budgets().back()));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kModelMismatch) << s.status().to_string();
}

TEST(BadInputs, CorruptAndTruncatedArtifactsAreRefused) {
  auto f = load("stories260K.gguf");
  if (!f)
    GTEST_SKIP() << "shared model is not present";
  const auto bytes = f->compiled.schedule.bytes();
  std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + bytes.size() / 2);
  auto t = Schedule::load_bytes(truncated);
  ASSERT_FALSE(t.ok());
  EXPECT_FALSE(t.status().message().empty());
  std::vector<uint8_t> foreign(bytes.begin(), bytes.end());
  foreign[4] = 'X'; // the file identifier
  auto x = Schedule::load_bytes(foreign);
  ASSERT_FALSE(x.ok());
  // Flipped bytes anywhere: refused or, if the verifier cannot tell, still never a crash
  // when used.
  for (size_t at = 8; at < bytes.size(); at += bytes.size() / 37) {
    std::vector<uint8_t> flipped(bytes.begin(), bytes.end());
    flipped[at] ^= 0x5a;
    auto s = Schedule::load_bytes(flipped);
    if (!s.ok())
      continue;
    auto device = EmuDevice::create(fast_emu(64ull << 20));
    ASSERT_TRUE(device.ok());
    auto session =
        HybridSession::create(*f->model, &*s, device->get(), params_with(s->budgets().back()));
    if (session.ok())
      (void)(*session)->decode(kPrompt);
  }
}

TEST(BadInputs, BudgetBelowTheSmallestPlanIsRefusedAtCreation) {
  auto f = load("stories260K.gguf");
  if (!f)
    GTEST_SKIP() << "shared model is not present";
  const uint64_t smallest = f->compiled.schedule.budgets().front();
  auto device = EmuDevice::create(fast_emu(64ull << 20));
  ASSERT_TRUE(device.ok());
  auto s = HybridSession::create(*f->model, &f->compiled.schedule, device->get(),
                                 params_with(smallest - 1));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(s.status().message().find(std::to_string(smallest)), std::string::npos)
      << s.status().to_string();
}

TEST(BadInputs, BudgetChangeBelowTheMinimumFailsAndTheSessionGoesOn) {
  auto f = load("stories260K.gguf");
  if (!f)
    GTEST_SKIP() << "shared model is not present";
  auto reference_session = CpuSession::create(*f->model, {64, 1, 256});
  ASSERT_TRUE(reference_session.ok());
  Trace reference;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, 8, &reference));

  const Schedule& sched = f->compiled.schedule;
  auto device = EmuDevice::create(fast_emu(64ull << 20));
  ASSERT_TRUE(device.ok());
  auto s = HybridSession::create(*f->model, &sched, device->get(), params_with(sched.budgets()[1]));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const Status st = (*s)->set_budget(sched.budgets().front() / 2);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(st.message().find("keeps its budget"), std::string::npos) << st.to_string();
  EXPECT_EQ((*s)->budget(), sched.budgets()[1]);
  Trace got;
  ASSERT_OK(greedy_trace(**s, kPrompt, 8, &got));
  EXPECT_TRUE(same_trace(reference, got));
}

TEST(BadInputs, ContextLongerThanCompiledIsRefused) {
  auto f = load("stories260K.gguf");
  if (!f)
    GTEST_SKIP() << "shared model is not present";
  HybridParams p = params_with(f->compiled.schedule.budgets().back());
  p.n_ctx = 128; // compiled for 64
  auto s = HybridSession::create(*f->model, &f->compiled.schedule, nullptr, p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("compiled for (64)"), std::string::npos)
      << s.status().to_string();
}

TEST(BadInputs, DeviceSmallerThanTheBudgetFailsLikeAnOutOfMemory) {
  auto f = load("stories260K.gguf");
  if (!f)
    GTEST_SKIP() << "shared model is not present";
  const Schedule& sched = f->compiled.schedule;
  auto device = EmuDevice::create(fast_emu(sched.budgets().front()));
  ASSERT_TRUE(device.ok());
  auto s =
      HybridSession::create(*f->model, &sched, device->get(), params_with(sched.budgets().back()));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kOutOfMemory) << s.status().to_string();
  // Another app takes memory after creation: the next budget change fails, the session
  // falls back to the CPU and still gives the right answer.
  auto device2 = EmuDevice::create(fast_emu(sched.budgets().back()));
  ASSERT_TRUE(device2.ok());
  auto s2 = HybridSession::create(*f->model, &sched, device2->get(),
                                  params_with(sched.budgets().front()));
  ASSERT_TRUE(s2.ok()) << s2.status().to_string();
  ASSERT_OK((*device2)->set_capacity(sched.budgets().front()));
  const Status st = (*s2)->set_budget(sched.budgets().back());
  EXPECT_EQ(st.code(), StatusCode::kOutOfMemory) << st.to_string();
  auto reference_session = CpuSession::create(*f->model, {64, 1, 256});
  ASSERT_TRUE(reference_session.ok());
  Trace reference, got;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, 6, &reference));
  ASSERT_OK(greedy_trace(**s2, kPrompt, 6, &got));
  EXPECT_TRUE(same_trace(reference, got));
}

} // namespace
} // namespace pshard
