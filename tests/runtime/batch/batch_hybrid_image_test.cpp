// Image entries in the batched hybrid engine (a schedule's plans, as pshard-server and
// pshard_batch serve them): an image prompt and a text prompt prefilled together in
// chunks cutting through the image, then decoded together, get — bit for bit — their
// logits alone on a CpuSession, on every plan of a schedule (every budget, every tier
// forced and looked up) on the cpu backend and on emu. The image's rows replace the
// placeholders' after the embed, on the host, whatever the embed's placement; a qwen3vl
// image's DeepStack rows are added after their layers on the host too.
#include "runtime/batch/batched_hybrid_session.h"
#include "tests/runtime/batch/batch_image_util.h"
#include "tests/runtime/executor/executor_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;
using namespace batch_image;

class BatchHybridImage : public ::testing::TestWithParam<Arch> {};

TEST_P(BatchHybridImage, ImageEntriesGetTheirLogitsAloneOnEveryPlan) {
  const Fixture f = make_fixture(GetParam());
  const Rows want_image = alone(f), want_text = text_alone(f);
  const std::string path = arch_model(GetParam());
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, 128, {},
                                   test_machine(), {}, kDefaultKvType, 2);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  BatchParams bp;
  bp.max_sequences = 2;
  bp.n_ctx = 128;
  bp.max_batch_tokens = 16;
  bp.page_tokens = 4;
  bp.n_threads = 2;
  std::vector<int64_t> tiers = sched.tiers();
  tiers.push_back(0); // looked up per pass
  int runs = 0, on_device = 0;
  for (uint64_t budget : sched.budgets())
    for (int64_t tier : tiers)
      for (bool emu : {false, true}) {
        SCOPED_TRACE("budget " + std::to_string(budget) + " tier " + std::to_string(tier) +
                     (emu ? " emu" : " cpu"));
        std::unique_ptr<Device> device = emu_or_none(emu, budget);
        BatchedHybridOptions o;
        o.vram_budget = budget;
        o.force_tier = tier;
        auto engine = BatchedHybridSession::create(*f.model, &sched, std::move(device), bp, o);
        ASSERT_TRUE(engine.ok()) << engine.status().to_string();
        Rows got_image, got_text;
        ASSERT_TRUE(run_both(**engine, f, got_image, got_text));
        EXPECT_EQ(got_image, want_image);
        EXPECT_EQ(got_text, want_text);
        ++runs;
        on_device += emu && (*engine)->stats().sessions.peak_device_bytes > 0;
      }
  EXPECT_EQ(runs, static_cast<int>(sched.budgets().size() * tiers.size() * 2));
  EXPECT_GT(on_device, 0) << "no emu run used the device";
}

INSTANTIATE_TEST_SUITE_P(Archs, BatchHybridImage, ::testing::Values(kQwen2Vl, kQwen3Vl),
                         [](const auto& info) { return std::string(info.param.arch); });

} // namespace
} // namespace pshard
