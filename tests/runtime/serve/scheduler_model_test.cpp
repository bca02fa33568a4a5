// The scheduler on the shared model: a request's greedy tokens (and log-probabilities,
// bit for bit) in a busy batch — prompts chunked, sequences joining and leaving — are
// the same prompt run alone through generate(), the loop pshard-run uses; on cpu with
// PerSequenceDecoder, and on the emulated GPU under a schedule smaller than the model,
// with the budget changed while it serves.
#include "runtime/batch/per_sequence_decoder.h"
#include "runtime/generate/draft_model.h"
#include "runtime/serve/batch_drafter.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/sequence_engine.h"
#include "tests/runtime/executor/executor_test_util.h"
#include "tests/runtime/serve/scheduler_test_util.h"

#include <gtest/gtest.h>
#include <thread>

namespace pshard::testing {
namespace {

const std::string kModel = shared_model("stories260K.gguf");
// Computes nearly the model's function (README of shared/models): a draft model.
const std::string kDraftModel = shared_model("stories260K-moe4x2-noise10.gguf");
constexpr int kNew = 24;

const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "The little dog",
    "Lily and Ben went to the park to play. They saw a big tree with red apples and",
    "Tom",
    "One day, a girl named Sue found a box in her room. She opened it and",
    "The sun was hot"};

struct Alone {
  std::vector<TokenId> tokens;
  std::vector<float> logprobs;
  std::string text;
};

class SchedulerOnModel : public ::testing::Test {
protected:
  void SetUp() override {
    PSHARD_SKIP_IF_MISSING(kModel);
    auto m = Model::load(kModel);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(*m);
    auto t = Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(t.ok());
    tokenizer_ = std::move(*t);
    for (const std::string& p : kPrompts)
      prompts_.push_back(tokenizer_->encode(p, true));
  }

  Result<std::unique_ptr<Decoder>> cpu_session() {
    PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(*model_, {256, 1, 16}));
    return std::unique_ptr<Decoder>(std::move(s));
  }

  // What pshard-run does with the prompt: generate() on one fresh session, greedy.
  Alone alone(const std::vector<TokenId>& prompt) {
    auto session = cpu_session();
    EXPECT_TRUE(session.ok());
    Sampler sampler(greedy_request({}, 0).sampling);
    GenerateParams gp;
    gp.n_predict = kNew;
    gp.top_logprobs = 1;
    auto r = generate(**session, *tokenizer_, sampler, prompt, gp);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    Alone a{r->generated, {}, {}};
    for (const auto& top : r->top_logprobs)
      a.logprobs.push_back(top[0].logprob);
    for (TokenId t : a.tokens)
      a.text += tokenizer_->token_to_piece(t);
    return a;
  }

  // All prompts through one scheduler, two of them joining late; each compared.
  SchedulerStats expect_batch_equals_alone(BatchDecoder& engine, SchedulerOptions o,
                                           const std::function<void(Scheduler&)>& meanwhile = {}) {
    Scheduler scheduler(engine, *tokenizer_, o);
    Collector got;
    std::vector<RequestId> ids;
    auto submit = [&](size_t i) {
      RequestParams r = greedy_request(prompts_[i], kNew);
      r.logprobs = true;
      ids.push_back(submit_ok(scheduler, r, got.sink()));
    };
    for (size_t i = 0; i + 2 < prompts_.size(); ++i)
      submit(i);
    for (int i = 0; i < 5; ++i)
      scheduler.step();
    submit(prompts_.size() - 2);
    submit(prompts_.size() - 1);
    if (meanwhile)
      meanwhile(scheduler);
    step_until_idle(scheduler);
    for (size_t i = 0; i < prompts_.size(); ++i) {
      const Alone want = alone(prompts_[i]);
      const Collector::Run r = got.run(ids[i]);
      EXPECT_EQ(r.tokens, want.tokens) << "prompt '" << kPrompts[i] << "'";
      EXPECT_EQ(r.text, want.text);
      std::vector<float> lp;
      for (const SequenceEvent& e : r.events)
        if (e.token != kNoToken)
          lp.push_back(e.logprob);
      EXPECT_EQ(lp, want.logprobs) << "bit for bit, prompt '" << kPrompts[i] << "'";
    }
    return scheduler.stats();
  }

  // A chat's two turns and a branch through one scheduler (the prefix cache's test).
  void chat_turns(int32_t draft_max);

  // The CPU engine these tests share: one thread, 256 positions per sequence.
  static SequenceEngineOptions engine_options(int64_t n_batch, int64_t max_sequences,
                                              int32_t draft_max) {
    SequenceEngineOptions o;
    o.n_threads = 1;
    o.n_ctx = 256;
    o.n_batch = n_batch;
    o.max_sequences = max_sequences;
    o.draft_max = draft_max;
    return o;
  }

  // `o` on the emulated GPU, 3 sequences of 16-token passes, under the smallest budget of
  // a schedule compiled for them (kept by the fixture: the engine reads it); null after
  // a failure.
  std::unique_ptr<BatchDecoder> small_budget_emu_engine(SequenceEngineOptions o) {
    auto compiled = compile_schedule(kModel, planner::Strategy::kAuto, {1, 4, 16}, 256, {},
                                     test_machine(), {}, kDefaultKvType, /*parallel=*/3);
    EXPECT_TRUE(compiled.ok()) << compiled.status().to_string();
    if (!compiled.ok())
      return nullptr;
    compiled_ = std::make_unique<Compiled>(std::move(*compiled));
    o.device.backend = DeviceBackend::kEmu;
    o.device.vram_budget = compiled_->schedule.budgets().front();
    o.device.emu_pcie_gbps = 50;
    o.device.emu_pcie_latency_us = 0;
    o.max_sequences = 3;
    o.n_batch = 16;
    auto engine = make_sequence_engine(*model_, &compiled_->schedule, o);
    EXPECT_TRUE(engine.ok()) << engine.status().to_string();
    return engine.ok() ? std::move(*engine) : nullptr;
  }

  // The noisy MoE upcycle, loaded once.
  const Model& draft_model() {
    if (!draft_model_) {
      auto m = Model::load(kDraftModel);
      EXPECT_TRUE(m.ok()) << m.status().to_string();
      draft_model_ = std::move(*m);
    }
    return *draft_model_;
  }
  // Its batched engine (`max_sequences` of 256 positions, passes of up to 256 tokens)
  // drafting for the model.
  std::unique_ptr<BatchDrafter> drafter(float p_min, int64_t max_sequences) {
    SequenceEngineOptions o = engine_options(256, max_sequences, 0);
    auto engine = make_sequence_engine(draft_model(), nullptr, o);
    EXPECT_TRUE(engine.ok()) << engine.status().to_string();
    return std::make_unique<BatchDrafter>(std::move(*engine), model_->hparams().n_vocab, p_min);
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<Model> draft_model_;
  std::unique_ptr<Compiled> compiled_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<std::vector<TokenId>> prompts_;
};

TEST_F(SchedulerOnModel, KnownAnswerInABusyBatch) {
  PerSequenceDecoder engine(4, 16, model_->hparams().n_vocab, [this] { return cpu_session(); });
  const Alone a = alone(prompts_[0]);
  EXPECT_EQ(a.text.substr(0, 40), ", there was a little girl named Lily. Sh");
  expect_batch_equals_alone(engine, {.max_active = 4, .pass_tokens = 16});
}

TEST_F(SchedulerOnModel, OnTheEmulatedGpuUnderASmallBudgetWhileTheBudgetChanges) {
  auto compiled = compile_schedule(kModel, planner::Strategy::kAuto, {1, 4, 16}, 256, {},
                                   test_machine(), {}, kDefaultKvType, /*parallel=*/3);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const std::vector<uint64_t> budgets = compiled->schedule.budgets();
  SequenceEngineOptions o = engine_options(16, 3, 0);
  o.device.backend = DeviceBackend::kEmu;
  o.device.vram_budget = budgets.front();
  o.device.emu_pcie_gbps = 50;
  o.device.emu_pcie_latency_us = 0;
  auto engine = make_sequence_engine(*model_, &compiled->schedule, o);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  EXPECT_LT(budgets.front(), model_->weight_bytes()) << "a budget below the model's size";
  std::thread changer;
  expect_batch_equals_alone(**engine, {.max_active = 3, .pass_tokens = 16}, [&](Scheduler& s) {
    changer = std::thread([&s, &budgets] {
      for (uint64_t b : {budgets[1], budgets.back(), budgets.front()})
        EXPECT_TRUE(s.set_vram_budget(b).ok());
      EXPECT_EQ(s.set_vram_budget(budgets.front() / 2).code(), StatusCode::kOutOfMemory)
          << "below the smallest compiled budget";
    });
  });
  changer.join();
  const BatchEngineStats st = (*engine)->stats();
  EXPECT_EQ(st.vram_budget, budgets.front());
  EXPECT_GT(st.sessions.passes, 0);
  std::set<int64_t> tiers;
  for (const PlanUse& u : st.sessions.plans)
    tiers.insert(u.tier);
  EXPECT_GE(tiers.size(), 2u) << "prompt chunks and decode steps ran different tiers";
}

// A chat's second turn (the first turn's prompt and answer, then more) and a request
// sharing the first one's start: the engine's prefix cache serves their common start
// (counted per request and in the stats), and every token and log-probability is the
// one the whole prompt gives decoded alone.
void SchedulerOnModel::chat_turns(int32_t draft_max) {
  const SequenceEngineOptions o = engine_options(16, 3, draft_max);
  auto engine = make_sequence_engine(*model_, nullptr, o);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  Scheduler scheduler(**engine, *tokenizer_,
                      {.max_active = 3, .pass_tokens = 16, .draft_max = draft_max});
  Collector got;
  auto run = [&](const std::vector<TokenId>& prompt) {
    RequestParams r = greedy_request(prompt, kNew);
    r.logprobs = true;
    const RequestId id = submit_ok(scheduler, r, got.sink());
    step_until_idle(scheduler);
    return got.run(id);
  };
  auto expect_alone = [&](const Collector::Run& r, const std::vector<TokenId>& prompt) {
    const Alone want = alone(prompt);
    EXPECT_EQ(r.tokens, want.tokens);
    std::vector<float> lp;
    for (const SequenceEvent& e : r.events)
      if (e.token != kNoToken)
        lp.push_back(e.logprob);
    EXPECT_EQ(lp, want.logprobs) << "bit for bit";
  };
  const std::vector<TokenId>& first = prompts_[2]; // 20-odd tokens: one full page
  const Collector::Run turn1 = run(first);
  expect_alone(turn1, first);
  EXPECT_EQ(turn1.events.back().n_cached, 0);
  std::vector<TokenId> second = first;
  second.insert(second.end(), turn1.tokens.begin(), turn1.tokens.end());
  const std::vector<TokenId> more = tokenizer_->encode(" Then they", false);
  second.insert(second.end(), more.begin(), more.end());
  const Collector::Run turn2 = run(second);
  expect_alone(turn2, second);
  // The first turn fed its prompt and all but its last answer token.
  const auto fed = static_cast<int64_t>(first.size() + turn1.tokens.size()) - 1;
  EXPECT_EQ(turn2.events.back().n_cached, fed / 16 * 16);
  EXPECT_GE(turn2.events.back().n_cached, 32);
  std::vector<TokenId> other(first.begin(), first.begin() + 17);
  other.push_back(tokenizer_->encode(" cat", false).front());
  const Collector::Run branch = run(other);
  expect_alone(branch, other);
  EXPECT_EQ(branch.events.back().n_cached, 16);
  EXPECT_EQ(scheduler.stats().cached_prompt_tokens, turn2.events.back().n_cached + 16);
}

TEST_F(SchedulerOnModel, PromptsStartingLikeEarlierOnesReadTheCacheAndAnswerAlike) {
  chat_turns(0);
}

// Speculative decoding (prompt lookup) in the scheduler: every request's tokens and
// log-probabilities are still those of generate() alone, in a busy batch on cpu and on
// the emulated GPU under a small budget; and a chat's second turn reads the pages the
// first turn wrote while it was drafting (the rewinds left the prefix cache true).
TEST_F(SchedulerOnModel, SpeculativeDecodingKeepsEveryAnswer) {
  SequenceEngineOptions o = engine_options(32, 4, 6);
  auto engine = make_sequence_engine(*model_, nullptr, o);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  const SchedulerStats st =
      expect_batch_equals_alone(**engine, {.max_active = 4, .pass_tokens = 32, .draft_max = 6});
  std::cout << "cpu: " << st.accepted_draft_tokens << " of " << st.draft_tokens
            << " drafted tokens accepted\n";
  EXPECT_GT(st.accepted_draft_tokens, 0) << "no draft kept: the test would not cover keeping";
  EXPECT_LT(st.accepted_draft_tokens, st.draft_tokens) << "none rejected: nor rewinding";

  std::unique_ptr<BatchDecoder> on_emu = small_budget_emu_engine(o);
  ASSERT_TRUE(on_emu);
  const SchedulerStats emu =
      expect_batch_equals_alone(*on_emu, {.max_active = 3, .pass_tokens = 16, .draft_max = 6});
  EXPECT_GT(emu.accepted_draft_tokens, 0);

  chat_turns(6);
}

// Sampled requests (each its own seed): the same tokens with and without drafts, by
// prompt lookup and by a draft model.
TEST_F(SchedulerOnModel, SpeculativeDecodingKeepsSampledAnswers) {
  PSHARD_SKIP_IF_MISSING(kDraftModel);
  std::unique_ptr<BatchDrafter> by_draft_model = drafter(kDefaultDraftPMin, 4);
  auto run = [&](int32_t draft_max, BatchDrafter* drafts = nullptr) {
    auto engine = make_sequence_engine(*model_, nullptr, engine_options(32, 4, draft_max));
    EXPECT_TRUE(engine.ok()) << engine.status().to_string();
    Scheduler scheduler(
        **engine, *tokenizer_,
        {.max_active = 4, .pass_tokens = 32, .draft_max = draft_max, .drafter = drafts});
    Collector got;
    std::vector<RequestId> ids;
    for (size_t i = 0; i < prompts_.size(); ++i) {
      RequestParams r = greedy_request(prompts_[i], 40);
      r.sampling.temperature = 0.8f;
      r.sampling.repeat_penalty = 1.1f;
      r.sampling.seed = 100 + i;
      ids.push_back(submit_ok(scheduler, r, got.sink()));
    }
    step_until_idle(scheduler);
    std::vector<std::vector<TokenId>> out;
    for (RequestId id : ids)
      out.push_back(got.run(id).tokens);
    return std::make_pair(out, scheduler.stats());
  };
  const auto plain = run(0);
  const auto drafted = run(6);
  EXPECT_EQ(drafted.first, plain.first);
  EXPECT_EQ(plain.second.draft_tokens, 0);
  EXPECT_GT(drafted.second.draft_tokens, 0);
  const auto by_model = run(6, by_draft_model.get());
  EXPECT_EQ(by_model.first, plain.first);
  EXPECT_GT(by_model.second.accepted_draft_tokens, 0);
  EXPECT_EQ(by_draft_model->engine().kv_pages().used_pages, 0)
      << "every ended request's draft sequence is closed";
}

// The batched drafter drafts, for several sequences at once, what one session of the
// draft model drafts for each alone (ModelDrafter, the same p_min), on their prompts and
// then on histories that take part of a draft and go elsewhere (rewinds); the sequences
// share passes: one for all prompts, then one per drafted position.
TEST_F(SchedulerOnModel, TheBatchedDrafterDraftsWhatOneSessionDrafts) {
  PSHARD_SKIP_IF_MISSING(kDraftModel);
  std::unique_ptr<BatchDrafter> batched = drafter(0.3f, 6);
  auto alone = [&](std::span<const TokenId> history) {
    auto session = CpuSession::create(draft_model(), {256, 1, 16});
    EXPECT_TRUE(session.ok());
    ModelDrafter one(**session, model_->hparams().n_vocab, 0.3f);
    auto d = one.draft(history, 8);
    EXPECT_TRUE(d.ok()) << d.status().to_string();
    return *d;
  };
  std::vector<std::vector<TokenId>> histories = prompts_;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    std::vector<DraftWant> wants;
    for (size_t i = 0; i < histories.size(); ++i)
      wants.push_back({static_cast<RequestId>(i), histories[i], 8});
    const int64_t passes_before = batched->passes();
    auto got = batched->draft(wants);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    size_t longest = 0, total = 0;
    for (size_t i = 0; i < histories.size(); ++i) {
      EXPECT_EQ((*got)[i], alone(histories[i])) << "prompt " << i;
      longest = std::max(longest, (*got)[i].size());
      total += (*got)[i].size();
    }
    EXPECT_GT(total, histories.size()) << "something was drafted";
    EXPECT_EQ(batched->passes() - passes_before, static_cast<int64_t>(std::max<size_t>(longest, 1)))
        << "one pass reads every history, then one per drafted position";
    // The next round: half of each draft kept, then a token of its own.
    for (size_t i = 0; i < histories.size(); ++i) {
      const std::vector<TokenId>& d = (*got)[i];
      histories[i].insert(histories[i].end(), d.begin(), d.begin() + d.size() / 2);
      histories[i].push_back(static_cast<TokenId>(100 + i));
    }
  }
  for (size_t i = 0; i < histories.size(); ++i)
    batched->forget(static_cast<RequestId>(i));
  EXPECT_EQ(batched->engine().kv_pages().used_pages, 0);
}

// A draft model (batch_drafter.h) drafting in place of prompt lookup: every request's
// tokens and log-probabilities are still those of generate() alone, in a busy batch on cpu
// and on the emulated GPU under a small budget. The noisy upcycle agrees often but not
// always, so drafts are both kept and rejected; the draft model's passes are shared by
// the sequences.
TEST_F(SchedulerOnModel, ADraftModelKeepsEveryAnswer) {
  PSHARD_SKIP_IF_MISSING(kDraftModel);
  std::unique_ptr<BatchDrafter> by_draft_model = drafter(/*p_min=*/0.0f, 4);
  SequenceEngineOptions o = engine_options(32, 4, 6);
  auto engine = make_sequence_engine(*model_, nullptr, o);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  const SchedulerStats st = expect_batch_equals_alone(
      **engine,
      {.max_active = 4, .pass_tokens = 32, .draft_max = 6, .drafter = by_draft_model.get()});
  std::cout << "cpu, draft model: " << st.accepted_draft_tokens << " of " << st.draft_tokens
            << " drafted tokens accepted, " << st.draft_passes << " passes of the draft model\n";
  EXPECT_GT(st.accepted_draft_tokens, 0);
  EXPECT_LT(st.accepted_draft_tokens, st.draft_tokens);
  EXPECT_EQ(st.draft_passes, by_draft_model->passes());
  // Alone, a sequence pays a draft-model pass per drafted token (its text, then one per
  // further token): fewer passes than tokens checked means the sequences shared them.
  EXPECT_LT(st.draft_passes, st.draft_tokens) << "sequences shared the draft model's passes";

  std::unique_ptr<BatchDecoder> on_emu = small_budget_emu_engine(o);
  ASSERT_TRUE(on_emu);
  const SchedulerStats emu = expect_batch_equals_alone(
      *on_emu,
      {.max_active = 3, .pass_tokens = 16, .draft_max = 6, .drafter = by_draft_model.get()});
  EXPECT_GT(emu.accepted_draft_tokens, 0);
}

// A BatchDecoder that forwards to another and fails its `fail_at`-th decode.
class FailsOnce final : public BatchDecoder {
public:
  FailsOnce(std::unique_ptr<BatchDecoder> inner, int fail_at)
      : inner_(std::move(inner)), fail_at_(fail_at) {}
  Result<SeqId> open_sequence() override { return inner_->open_sequence(); }
  Result<OpenedSequence> open_sequence_with_prefix(std::span<const TokenId> p) override {
    return inner_->open_sequence_with_prefix(p);
  }
  void close_sequence(SeqId s) override { inner_->close_sequence(s); }
  Status rewind_sequence(SeqId s, std::span<const TokenId> kept) override {
    return inner_->rewind_sequence(s, kept);
  }
  int64_t sequence_length(SeqId s) const override { return inner_->sequence_length(s); }
  bool can_append(SeqId s, int64_t n) const override { return inner_->can_append(s, n); }
  Result<BatchLogits> decode(std::span<const BatchEntry> batch) override {
    if (++calls_ == fail_at_)
      return internal_error("the draft engine broke");
    return inner_->decode(batch);
  }
  int64_t n_vocab() const override { return inner_->n_vocab(); }
  int64_t n_ctx() const override { return inner_->n_ctx(); }
  int64_t max_batch_tokens() const override { return inner_->max_batch_tokens(); }
  int64_t max_sequences() const override { return inner_->max_sequences(); }
  KvPageStats kv_pages() const override { return inner_->kv_pages(); }

private:
  std::unique_ptr<BatchDecoder> inner_;
  int fail_at_, calls_ = 0;
};

// A pass of the draft model that fails ends the requests it drafted for, naming why; the
// scheduler serves on, a later request drafting again from a fresh sequence.
TEST_F(SchedulerOnModel, AFailedDraftPassEndsItsRequestsAndServingGoesOn) {
  PSHARD_SKIP_IF_MISSING(kDraftModel);
  auto draft_engine = make_sequence_engine(draft_model(), nullptr, engine_options(64, 4, 0));
  ASSERT_TRUE(draft_engine.ok());
  BatchDrafter by_draft_model(std::make_unique<FailsOnce>(std::move(*draft_engine), 3),
                              model_->hparams().n_vocab, 0.0f);
  auto engine = make_sequence_engine(*model_, nullptr, engine_options(32, 4, 4));
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  Scheduler scheduler(
      **engine, *tokenizer_,
      {.max_active = 4, .pass_tokens = 32, .draft_max = 4, .drafter = &by_draft_model});
  Collector got;
  const RequestId a = submit_ok(scheduler, greedy_request(prompts_[0], kNew), got.sink());
  const RequestId b = submit_ok(scheduler, greedy_request(prompts_[1], kNew), got.sink());
  step_until_idle(scheduler);
  for (RequestId id : {a, b}) {
    const Collector::Run r = got.run(id);
    EXPECT_EQ(r.finish, FinishReason::kError);
    EXPECT_NE(r.error.message().find("the draft engine broke"), std::string::npos)
        << r.error.to_string();
    EXPECT_NE(r.error.message().find("drafting"), std::string::npos) << r.error.to_string();
  }
  const RequestId c = submit_ok(scheduler, greedy_request(prompts_[2], kNew), got.sink());
  step_until_idle(scheduler);
  EXPECT_EQ(got.run(c).finish, FinishReason::kLength);
  EXPECT_EQ(got.run(c).tokens, alone(prompts_[2]).tokens);
  EXPECT_GT(scheduler.stats().accepted_draft_tokens, 0);
}

} // namespace
} // namespace pshard::testing
