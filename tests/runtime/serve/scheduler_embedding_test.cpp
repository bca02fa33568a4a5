// Embedding requests in the scheduler: beside generating requests, in passes shared with
// them, each gets — bit for bit — the vector embed() computes for its text alone on a
// CpuSession, for every pooling and with a Matryoshka cut; on the cpu engine and on the
// emulated GPU under a schedule smaller than the model. Generation answers are unchanged.
#include "runtime/generate/embedding.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/sequence_engine.h"
#include "tests/runtime/executor/executor_test_util.h"
#include "tests/runtime/serve/scheduler_test_util.h"

#include <gtest/gtest.h>

namespace pshard::testing {
namespace {

const std::string kModel = shared_model("stories260K.gguf");

const std::vector<std::string> kTexts = {
    "Once upon a time",
    "Lily and Ben went to the park to play. They saw a big tree with red apples and",
    "Tom",
    "One day, a girl named Sue found a box in her room. She opened it and found a key"};

class SchedulerEmbeddings : public ::testing::Test {
protected:
  void SetUp() override {
    PSHARD_SKIP_IF_MISSING(kModel);
    auto m = Model::load(kModel);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(*m);
    auto t = Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(t.ok());
    tokenizer_ = std::move(*t);
  }

  std::vector<float> alone(const std::vector<TokenId>& ids, Pooling p, EmbeddingOptions o) {
    auto s = CpuSession::create(*model_, {256, 1, 16});
    EXPECT_TRUE(s.ok());
    auto v = embed(**s, model_->hparams().n_embd, ids, p, o);
    EXPECT_TRUE(v.ok()) << v.status().to_string();
    return v.ok() ? *v : std::vector<float>{};
  }

  void expect_alone(BatchDecoder& engine) {
    Scheduler scheduler(engine, *tokenizer_, {.max_active = 3, .pass_tokens = 16});
    Collector got;
    struct Asked {
      RequestId id;
      std::vector<TokenId> ids;
      Pooling pooling;
      EmbeddingOptions options;
    };
    std::vector<Asked> asked;
    const std::vector<TokenId> story = tokenizer_->encode(kTexts[0], true);
    const RequestId gen = submit_ok(scheduler, greedy_request(story, 20), got.sink());
    const Pooling kinds[] = {Pooling::kMean, Pooling::kLast, Pooling::kCls, Pooling::kNone};
    for (size_t i = 0; i < 8; ++i) {
      RequestParams r;
      r.prompt = tokenizer_->encode(kTexts[i % kTexts.size()], true);
      r.embedding = RequestParams::Embedding{kinds[i % 4], {.normalize = i % 3 != 0,
                                                            .dimensions = i == 5 ? 16 : 0}};
      asked.push_back({submit_ok(scheduler, r, got.sink()), r.prompt, r.embedding->pooling,
                       r.embedding->options});
    }
    step_until_idle(scheduler);
    const int64_t n_embd = model_->hparams().n_embd;
    for (const Asked& a : asked) {
      const Collector::Run r = got.run(a.id);
      SCOPED_TRACE(std::string(pooling_name(a.pooling)) + " request " + std::to_string(a.id));
      ASSERT_EQ(r.finish, FinishReason::kStop) << r.error.to_string();
      ASSERT_EQ(r.events.size(), 1u);
      EXPECT_TRUE(r.tokens.empty());
      const std::vector<float>& v = r.events.back().embedding;
      const int64_t width = a.options.dimensions ? a.options.dimensions : n_embd;
      EXPECT_EQ(static_cast<int64_t>(v.size()),
                a.pooling == Pooling::kNone ? width * static_cast<int64_t>(a.ids.size()) : width);
      EXPECT_EQ(v, alone(a.ids, a.pooling, a.options)) << "bit for bit";
      EXPECT_EQ(r.events.back().n_prompt, static_cast<int64_t>(a.ids.size()));
    }
    // The generating request beside them: the known answer's start.
    std::string text = got.run(gen).text;
    EXPECT_EQ(text.substr(0, 30), ", there was a little girl name");
    EXPECT_EQ(scheduler.stats().finished[static_cast<int>(FinishReason::kStop)] +
                  scheduler.stats().finished[static_cast<int>(FinishReason::kLength)],
              9);
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

SequenceEngineOptions options() {
  SequenceEngineOptions o;
  o.n_threads = 1;
  o.n_ctx = 256;
  o.n_batch = 16;
  o.max_sequences = 3;
  return o;
}

TEST_F(SchedulerEmbeddings, EachRequestGetsItsVectorAloneOnCpu) {
  auto engine = make_sequence_engine(*model_, nullptr, options());
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  expect_alone(**engine);
}

TEST_F(SchedulerEmbeddings, EachRequestGetsItsVectorAloneOnEmuUnderASmallBudget) {
  auto compiled = compile_schedule(kModel, planner::Strategy::kAuto, {1, 4, 16}, 256, {},
                                   test_machine(), {}, kDefaultKvType, /*parallel=*/3);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  SequenceEngineOptions o = options();
  o.device.backend = DeviceBackend::kEmu;
  o.device.vram_budget = compiled->schedule.budgets().front();
  o.device.emu_pcie_gbps = 50;
  o.device.emu_pcie_latency_us = 0;
  auto engine = make_sequence_engine(*model_, &compiled->schedule, o);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  EXPECT_LT(compiled->schedule.budgets().front(), model_->weight_bytes());
  expect_alone(**engine);
}

TEST_F(SchedulerEmbeddings, BadRequestsAreRefusedAtSubmit) {
  auto engine = make_sequence_engine(*model_, nullptr, options());
  ASSERT_TRUE(engine.ok());
  Scheduler scheduler(**engine, *tokenizer_, {});
  RequestParams r;
  r.prompt = tokenizer_->encode("Tom", true);
  r.embedding = RequestParams::Embedding{Pooling::kMean, {.dimensions = 1000}};
  auto wide = scheduler.submit(r, {});
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("dimensions 1000"), std::string::npos);
  r.embedding = RequestParams::Embedding{Pooling::kUnspecified, {}};
  auto unspecified = scheduler.submit(r, {});
  ASSERT_FALSE(unspecified.ok());
  EXPECT_NE(unspecified.status().message().find("pooling"), std::string::npos);
}

} // namespace
} // namespace pshard::testing
