// The scheduler's thread-safe calls from other threads while one thread steps: every
// request ends exactly once with its own tokens, cancels land, budget changes happen
// between passes, nothing leaks.
#include "runtime/serve/scheduler.h"
#include "tests/runtime/serve/fake_engine.h"
#include "tests/runtime/serve/scheduler_test_util.h"

#include <atomic>
#include <gtest/gtest.h>
#include <thread>

namespace pshard::testing {
namespace {

TEST(SchedulerThreads, SubmitCancelAndBudgetFromOtherThreadsWhileOneSteps) {
  FakeEngine engine(4, 16, 256, 16, 1000);
  FakeTokenizer tokenizer;
  Scheduler scheduler(engine, tokenizer, {.max_active = 4, .max_queued = 1000});
  Collector got;
  std::atomic<bool> stop{false};
  std::thread stepper([&] {
    while (!stop)
      if (scheduler.wait_for_work(std::chrono::milliseconds(5)))
        scheduler.step();
  });

  constexpr int kThreads = 4, kPerThread = 25;
  std::vector<std::vector<std::pair<RequestId, std::vector<TokenId>>>> submitted(kThreads);
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t)
    clients.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::vector<TokenId> prompt = {static_cast<TokenId>(1 + t),
                                             static_cast<TokenId>(1 + i % 20)};
        const RequestId id = submit_ok(scheduler, greedy_request(prompt, 8), got.sink());
        submitted[t].emplace_back(id, prompt);
        if (i % 5 == 0)
          scheduler.cancel(id); // a client that gives up at once
        if (i % 7 == 0) {
          EXPECT_TRUE(scheduler.set_vram_budget(static_cast<uint64_t>(1000 * t + i)).ok());
        }
      }
    });
  for (auto& c : clients)
    c.join();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (got.finished() < kThreads * kPerThread && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  stepper.join();

  ASSERT_EQ(got.finished(), static_cast<size_t>(kThreads * kPerThread));
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < submitted[t].size(); ++i) {
      const auto& [id, prompt] = submitted[t][i];
      const Collector::Run r = got.run(id);
      EXPECT_EQ(r.finals, 1) << "request " << id;
      if (r.finish == FinishReason::kCancelled) {
        const auto want = scripted_greedy(prompt, 8);
        EXPECT_TRUE(std::equal(r.tokens.begin(), r.tokens.end(), want.begin()));
      } else {
        EXPECT_EQ(r.finish, FinishReason::kLength);
        EXPECT_EQ(r.tokens, scripted_greedy(prompt, 8)) << "request " << id;
      }
    }
  EXPECT_EQ(engine.open_count(), 0);
  EXPECT_EQ(engine.opened, engine.closed);
  const SchedulerStats st = scheduler.stats();
  EXPECT_EQ(st.submitted, kThreads * kPerThread);
  EXPECT_GE(st.finished[static_cast<int>(FinishReason::kCancelled)], 1);
}

TEST(SchedulerThreads, ASinkMaySubmitAndChangeTheBudget) {
  FakeEngine engine(4, 16, 256, 16, 1000);
  FakeTokenizer tokenizer;
  Scheduler scheduler(engine, tokenizer, {});
  Collector got;
  EventSink inner = got.sink();
  RequestId follow_up = -1;
  submit_ok(scheduler, greedy_request({1}, 2), [&](const SequenceEvent& e) {
    if (e.finish != FinishReason::kNone) {
      EXPECT_TRUE(scheduler.set_vram_budget(77).ok());
      follow_up = submit_ok(scheduler, greedy_request({2}, 3), inner);
    }
    return true;
  });
  step_until_idle(scheduler);
  EXPECT_EQ(engine.budget, 77u);
  EXPECT_EQ(got.run(follow_up).tokens, scripted_greedy({2}, 3));
}

} // namespace
} // namespace pshard::testing
