// Serving a model with recurrent layers (Qwen3-Next's Gated DeltaNet): make_sequence_engine
// runs a session per sequence, and each request in a busy scheduler gets the tokens and
// log-probabilities (bit for bit) of its prompt decoded alone; on the emulated GPU one
// sequence under a schedule; what cannot work — drafts, the paged batch engines, several
// sequences on one device — is refused, saying what to do instead.
#include "runtime/batch/batched_cpu_session.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/sequence_engine.h"
#include "tests/runtime/executor/executor_test_util.h"
#include "tests/runtime/serve/scheduler_test_util.h"

#include <gtest/gtest.h>

namespace pshard::testing {
namespace {

constexpr int kNew = 10;

class RecurrentEngine : public ::testing::Test {
protected:
  void SetUp() override {
    auto m = Model::load(invariance_model_path("mk-qwen3next", "serve-"));
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(*m);
    auto t = Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(t.ok());
    tokenizer_ = std::move(*t);
    for (int i = 0; i < 4; ++i) { // prompts of 3 to 30 tokens
      std::vector<TokenId> p;
      for (int j = 0; j < 3 + 9 * i; ++j)
        p.push_back(static_cast<TokenId>(5 + (37 * i + 11 * j) % 400));
      prompts_.push_back(p);
    }
  }

  static SequenceEngineOptions options(int64_t max_sequences) {
    SequenceEngineOptions o;
    o.n_threads = 1;
    o.n_ctx = 128;
    o.n_batch = 8; // longer prompts run in chunks
    o.max_sequences = max_sequences;
    return o;
  }

  // Greedy tokens and log-probabilities of `prompt` decoded alone on the host.
  std::pair<std::vector<TokenId>, std::vector<float>> alone(const std::vector<TokenId>& prompt) {
    auto s = CpuSession::create(*model_, {128, 1, 8});
    EXPECT_TRUE(s.ok());
    Sampler sampler(greedy_request({}, 0).sampling);
    GenerateParams gp;
    gp.n_predict = kNew;
    gp.top_logprobs = 1;
    auto r = generate(**s, *tokenizer_, sampler, prompt, gp);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    std::vector<float> lp;
    for (const auto& top : r->top_logprobs)
      lp.push_back(top[0].logprob);
    return {r->generated, lp};
  }

  void expect_each_as_alone(BatchDecoder& engine, int64_t active) {
    Scheduler scheduler(engine, *tokenizer_, {.max_active = active, .pass_tokens = 8});
    Collector got;
    std::vector<RequestId> ids;
    for (const auto& p : prompts_) {
      RequestParams r = greedy_request(p, kNew);
      r.logprobs = true;
      r.ignore_eos = true;
      ids.push_back(submit_ok(scheduler, r, got.sink()));
    }
    step_until_idle(scheduler);
    for (size_t i = 0; i < prompts_.size(); ++i) {
      const auto [tokens, logprobs] = alone(prompts_[i]);
      const Collector::Run r = got.run(ids[i]);
      EXPECT_EQ(r.tokens, tokens) << "prompt " << i;
      std::vector<float> lp;
      for (const SequenceEvent& e : r.events)
        if (e.token != kNoToken)
          lp.push_back(e.logprob);
      EXPECT_EQ(lp, logprobs) << "bit for bit, prompt " << i;
    }
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<std::vector<TokenId>> prompts_;
};

TEST_F(RecurrentEngine, OnTheHostEachRequestIsItsPromptAlone) {
  auto engine = make_sequence_engine(*model_, nullptr, options(3));
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  expect_each_as_alone(**engine, 3);
}

TEST_F(RecurrentEngine, OnTheEmulatedGpuOneSequenceUnderASchedule) {
  auto compiled = compile_schedule(invariance_model_path("mk-qwen3next", "serve-"),
                                   planner::Strategy::kAuto, {1, 8}, 128);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  SequenceEngineOptions o = options(1);
  o.device.backend = DeviceBackend::kEmu;
  o.device.vram_budget = compiled->schedule.budgets()[1];
  auto engine = make_sequence_engine(*model_, &compiled->schedule, o);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  expect_each_as_alone(**engine, 1);

  o.max_sequences = 2;
  const auto two = make_sequence_engine(*model_, &compiled->schedule, o);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("--parallel 1"), std::string::npos)
      << two.status().message();
}

TEST_F(RecurrentEngine, DraftsAndPagedEnginesAreRefused) {
  SequenceEngineOptions o = options(2);
  o.draft_max = 3;
  const auto drafted = make_sequence_engine(*model_, nullptr, o);
  ASSERT_FALSE(drafted.ok());
  EXPECT_NE(drafted.status().message().find("--draft-max 0"), std::string::npos);

  const auto paged = BatchedCpuSession::create(*model_, BatchParams{});
  ASSERT_FALSE(paged.ok());
  EXPECT_EQ(paged.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(paged.status().message().find("one session per sequence"), std::string::npos);

  auto s = CpuSession::create(*model_, {128, 1, 8, kDefaultKvType, kDefaultKvType, 4});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE((*s)->rewinds_anywhere());
  Sampler sampler(greedy_request({}, 0).sampling);
  GenerateParams gp;
  gp.n_predict = 4;
  gp.lookup.draft_max = 3;
  const auto r = generate(**s, *tokenizer_, sampler, prompts_[1], gp);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--draft-max 0"), std::string::npos);
}

} // namespace
} // namespace pshard::testing
