// Serving a model with recurrent layers (Qwen3-Next's and Qwen3.5's Gated DeltaNet): on the
// host and on a device make_sequence_engine batches the sequences (a state per sequence
// slot), and each request in a busy scheduler — slots taken over by later requests
// included — gets the tokens and log-probabilities (bit for bit) of its prompt decoded
// alone, on the host and on the emulated GPU under a schedule; what cannot work — drafts,
// rewinding into a state — is refused, saying what to do instead.
#include "runtime/batch/batched_cpu_session.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/sequence_engine.h"
#include "tests/runtime/executor/executor_test_util.h"
#include "tests/runtime/serve/scheduler_test_util.h"

#include <algorithm>
#include <gtest/gtest.h>

namespace pshard::testing {
namespace {

constexpr int kNew = 10;

class RecurrentEngine : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    auto m = Model::load(invariance_model_path(GetParam(), "serve-"));
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

TEST_P(RecurrentEngine, OnTheHostBatchedEachRequestIsItsPromptAlone) {
  auto engine = make_sequence_engine(*model_, nullptr, options(3));
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  EXPECT_NE(dynamic_cast<BatchedCpuSession*>(engine->get()), nullptr) << "batched";
  expect_each_as_alone(**engine, 3); // 4 requests on 3 slots: one slot serves two
}

// On the emulated GPU the device batch engine holds a state per sequence slot in each
// recurrent layer's cache (the schedule compiled for 3 sequences sizes them so), on every
// budget: each request is its prompt alone, bit for bit.
TEST_P(RecurrentEngine, OnTheEmulatedGpuBatchedUnderASchedule) {
  auto compiled =
      compile_schedule(invariance_model_path(GetParam(), "serve-"), planner::Strategy::kAuto,
                       {1, 8}, 128, {}, test_machine(), {}, kDefaultKvType, /*parallel=*/3);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  for (const uint64_t budget : compiled->schedule.budgets()) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    SequenceEngineOptions o = options(3);
    o.device.backend = DeviceBackend::kEmu;
    o.device.vram_budget = budget;
    auto engine = make_sequence_engine(*model_, &compiled->schedule, o);
    ASSERT_TRUE(engine.ok()) << engine.status().to_string();
    expect_each_as_alone(**engine, 3);
  }
}

// A sequence rewinds to 0 (and decodes as anew) or to where it is, never into its state;
// the slots' states are apart, and no prompt start is shared (the prefix cache is off).
TEST_P(RecurrentEngine, ASequenceRewindsOnlyToItsStartAndSlotsKeepTheirStates) {
  BatchParams bp;
  bp.max_sequences = 2;
  bp.n_ctx = 128;
  bp.n_threads = 1;
  auto made = BatchedCpuSession::create(*model_, bp);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  BatchedCpuSession& e = **made;
  const std::vector<TokenId>& prompt = prompts_[2];
  auto last_logits = [&](SeqId seq, std::span<const TokenId> tokens) {
    std::vector<BatchEntry> batch;
    for (size_t i = 0; i < tokens.size(); ++i)
      batch.push_back({seq, tokens[i], i + 1 == tokens.size()});
    auto out = e.decode(batch);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    return out.ok() ? std::vector<float>(out->data, out->data + out->n_vocab)
                    : std::vector<float>{};
  };
  auto a = e.open_sequence_with_prefix(prompt);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->reused, 0) << "no prefix is shared";
  const std::vector<float> first = last_logits(a->seq, prompt);
  auto b = e.open_sequence();
  ASSERT_TRUE(b.ok());
  const std::vector<float> other = last_logits(*b, prompts_[1]);
  const Status mid = e.rewind_sequence(a->seq, std::span(prompt).first(5));
  ASSERT_FALSE(mid.ok());
  EXPECT_EQ(mid.code(), StatusCode::kOutOfRange);
  EXPECT_NE(mid.message().find("rewind to 0"), std::string::npos) << mid.message();
  EXPECT_TRUE(e.rewind_sequence(a->seq, prompt).ok()) << "where it is";
  ASSERT_TRUE(e.rewind_sequence(a->seq, {}).ok());
  EXPECT_EQ(last_logits(a->seq, prompt), first) << "decoded again from a zero state";
  e.close_sequence(*b);
  auto c = e.open_sequence(); // slot b's, its state left by the last prompt
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(last_logits(*c, prompts_[1]), other) << "a new sequence starts from a zero state";
}

TEST_P(RecurrentEngine, DraftsAreRefused) {
  SequenceEngineOptions o = options(2);
  o.draft_max = 3;
  const auto drafted = make_sequence_engine(*model_, nullptr, o);
  ASSERT_FALSE(drafted.ok());
  EXPECT_NE(drafted.status().message().find("--draft-max 0"), std::string::npos);

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

INSTANTIATE_TEST_SUITE_P(Models, RecurrentEngine, ::testing::Values("mk-qwen3next", "mk-qwen35"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

} // namespace
} // namespace pshard::testing
