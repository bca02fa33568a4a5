// Speculative decoding on real sessions: decode_all's rows are, bit for bit, the logits
// one-token passes give (on the CPU session and under every plan of a schedule on the
// cpu and emu backends), rewind drops positions so the next pass overwrites them, and
// generation with prompt-lookup drafts gives the tokens of plain generation — greedy
// and sampled, whatever the draft length — while checking several tokens a pass.
#include "executor_test_util.h"
#include "runtime/generate/generator.h"
#include "runtime/tokenizer/tokenizer.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 96;
const std::vector<TokenId> kPrompt = {1, 403, 407, 261, 378, 290, 311};

// Logits of `tokens` one pass each after `prompt`, from a fresh decoder.
Result<std::vector<std::vector<float>>> one_at_a_time(Decoder& d, std::span<const TokenId> prompt,
                                                      std::span<const TokenId> tokens) {
  PSHARD_RETURN_IF_ERROR(d.decode(prompt).status());
  std::vector<std::vector<float>> rows;
  for (TokenId t : tokens) {
    PSHARD_ASSIGN_OR_RETURN(std::span<const float> l, d.decode(std::span<const TokenId>(&t, 1)));
    rows.emplace_back(l.begin(), l.end());
  }
  return rows;
}

// decode_all of `tokens` after `prompt` gives rows equal to `want`; then rewinding to
// the prompt and decoding the same tokens gives them again (the dropped KV rows are
// overwritten, nothing of them leaks).
void expect_rows_match(Decoder& d, std::span<const TokenId> prompt, std::span<const TokenId> tokens,
                       const std::vector<std::vector<float>>& want) {
  ASSERT_OK(d.decode(prompt).status());
  for (int round = 0; round < 2; ++round) {
    auto all = d.decode_all(tokens);
    ASSERT_TRUE(all.ok()) << all.status().to_string();
    const size_t n_vocab = want[0].size();
    ASSERT_EQ(all->size(), tokens.size() * n_vocab);
    for (size_t i = 0; i < tokens.size(); ++i)
      EXPECT_EQ(std::memcmp(all->data() + i * n_vocab, want[i].data(), n_vocab * sizeof(float)), 0)
          << "row " << i << " of round " << round;
    ASSERT_OK(d.rewind(static_cast<int64_t>(prompt.size())));
    EXPECT_EQ(d.n_past(), static_cast<int64_t>(prompt.size()));
  }
}

class SpeculativeRows : public ::testing::TestWithParam<std::string> {};

TEST_P(SpeculativeRows, DecodeAllGivesEachTokensOnePassLogits) {
  const std::string path = invariance_model_path(GetParam(), "spec-");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const std::vector<TokenId> tokens = {290, 311, 403, 407, 261};
  SessionParams sp{kCtx, 2, 256, kDefaultKvType, kDefaultKvType, 8};
  auto reference = CpuSession::create(**model, sp);
  ASSERT_TRUE(reference.ok());
  auto want = one_at_a_time(**reference, kPrompt, tokens);
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  auto cpu = CpuSession::create(**model, sp);
  ASSERT_TRUE(cpu.ok());
  expect_rows_match(**cpu, kPrompt, tokens, *want);

  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, kCtx);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  int runs = 0;
  for (uint64_t budget : compiled->schedule.budgets())
    for (bool emu : {false, true}) {
      SCOPED_TRACE(std::string(emu ? "emu" : "cpu") + " budget " + std::to_string(budget));
      HybridParams params = forced_params(kCtx, budget, 0);
      params.max_logit_rows = 8;
      auto device = emu_or_none(emu, budget);
      auto s = HybridSession::create(**model, &compiled->schedule, device.get(), params);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      EXPECT_EQ((*s)->max_logit_rows(), 8);
      expect_rows_match(**s, kPrompt, tokens, *want);
      ++runs;
    }
  EXPECT_GT(runs, 2);
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeRows,
                         ::testing::Values("stories260K.gguf", "stories260K-moe4x2-noise10.gguf",
                                           "stories260K-qwen3moe.gguf", "mk-moe6", "mk-qwen3",
                                           "mk-qwen2vl"),
                         model_param_name);

TEST(SpeculativeRows, BadCallsAreRefusedAndLeaveTheSessionAsItWas) {
  const std::string path = shared_model("stories260K.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok());
  auto cpu = CpuSession::create(**model, {kCtx, 1, 256, kDefaultKvType, kDefaultKvType, 3});
  ASSERT_TRUE(cpu.ok());
  auto hybrid = HybridSession::create(**model, nullptr, nullptr, forced_params(kCtx, 0, 0));
  ASSERT_TRUE(hybrid.ok());
  EXPECT_EQ((*hybrid)->max_logit_rows(), 1); // made without logit rows to spare
  for (Decoder* d : std::initializer_list<Decoder*>{cpu->get(), hybrid->get()}) {
    ASSERT_OK(d->decode(kPrompt).status());
    const std::vector<TokenId> four = {1, 2, 3, 4};
    auto too_many = d->decode_all(four);
    EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(too_many.status().message().find("max_logit_rows"), std::string::npos);
    EXPECT_EQ(d->rewind(d->n_past() + 1).code(), StatusCode::kOutOfRange);
    EXPECT_EQ(d->rewind(-1).code(), StatusCode::kOutOfRange);
    EXPECT_EQ(d->n_past(), static_cast<int64_t>(kPrompt.size()));
  }
}

// Generation: plain, then with drafts of several lengths, greedy and sampled.
struct Run {
  std::vector<TokenId> tokens;
  GenerateTimings timings;
};

Result<Run> run(Decoder& d, const Tokenizer& tok, const std::vector<TokenId>& prompt,
                const SamplerParams& sp, int32_t draft_max, int32_t n, bool adaptive = false) {
  Sampler sampler(sp);
  GenerateParams gp;
  gp.n_predict = n;
  gp.ignore_eos = true;
  gp.lookup.draft_max = draft_max;
  gp.lookup.adaptive = adaptive; // fixed drafting: the counts below do not depend on timing
  PSHARD_ASSIGN_OR_RETURN(GenerateResult r, generate(d, tok, sampler, prompt, gp));
  return Run{r.generated, r.timings};
}

class SpeculativeGeneration : public ::testing::TestWithParam<std::string> {};

TEST_P(SpeculativeGeneration, GivesThePlainTokensWithFewerPasses) {
  const std::string path = shared_model(GetParam());
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto tok = Tokenizer::from_gguf((*model)->file());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  // A story's opening twice: the model tends to go on repeating it, which drafts well.
  const std::string text = "Once upon a time, there was a little girl named Lily. She loved to "
                           "play outside. Once upon a time, there was a little girl named Lily.";
  const std::vector<TokenId> prompt = (*tok)->encode(text, (*tok)->add_bos_by_default());
  constexpr int32_t kN = 60;
  constexpr int64_t kGenCtx = 160; // the prompt and kN tokens
  SamplerParams greedy;
  greedy.temperature = 0;
  SamplerParams sampled;
  sampled.seed = 42;
  sampled.repeat_penalty = 1.1f;
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, kGenCtx);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const std::vector<uint64_t>& budgets = compiled->schedule.budgets();
  int64_t accepted = 0, drafted = 0;
  for (const SamplerParams& sp : {greedy, sampled}) {
    auto plain_session =
        CpuSession::create(**model, {kGenCtx, 2, 256, kDefaultKvType, kDefaultKvType, 1});
    ASSERT_TRUE(plain_session.ok());
    auto plain = run(**plain_session, **tok, prompt, sp, 0, kN);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    ASSERT_EQ(plain->tokens.size(), static_cast<size_t>(kN));
    EXPECT_EQ(plain->timings.n_decode_passes, kN - 1);
    for (int32_t draft : {1, 3, 8}) {
      SCOPED_TRACE("temperature " + std::to_string(sp.temperature) + " draft " +
                   std::to_string(draft));
      auto cpu =
          CpuSession::create(**model, {kGenCtx, 2, 256, kDefaultKvType, kDefaultKvType, draft + 1});
      ASSERT_TRUE(cpu.ok());
      auto got = run(**cpu, **tok, prompt, sp, draft, kN);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(got->tokens, plain->tokens) << "cpu session";
      // Every pass after the prompt gives one sampled token plus its accepted drafts.
      EXPECT_EQ(got->timings.n_decode_passes + got->timings.n_accepted, kN - 1);
      EXPECT_LE(got->timings.n_accepted, got->timings.n_drafted);
      accepted += got->timings.n_accepted;
      drafted += got->timings.n_drafted;
      // Drafts checked as the measured times suggest: which passes depends on the
      // machine, the tokens do not.
      (*cpu)->reset();
      auto adaptive = run(**cpu, **tok, prompt, sp, draft, kN, /*adaptive=*/true);
      ASSERT_TRUE(adaptive.ok()) << adaptive.status().to_string();
      EXPECT_EQ(adaptive->tokens, plain->tokens) << "adaptive drafts";
      // Under the schedule's plans, on the emulated GPU: the smallest and largest budget.
      for (uint64_t budget : {budgets.front(), budgets.back()}) {
        HybridParams params = forced_params(kGenCtx, budget, 0);
        params.max_logit_rows = draft + 1;
        auto device = emu_or_none(true, budget);
        auto s = HybridSession::create(**model, &compiled->schedule, device.get(), params);
        ASSERT_TRUE(s.ok()) << s.status().to_string();
        auto hybrid = run(**s, **tok, prompt, sp, draft, kN);
        ASSERT_TRUE(hybrid.ok()) << hybrid.status().to_string();
        EXPECT_EQ(hybrid->tokens, plain->tokens) << "emu budget " << budget;
        EXPECT_EQ(hybrid->timings.n_accepted, got->timings.n_accepted);
      }
    }
  }
  std::cout << GetParam() << ": " << accepted << " of " << drafted << " drafted tokens accepted\n";
  EXPECT_GT(accepted, 0) << "no draft was ever accepted: the test would not cover acceptance";
  EXPECT_LT(accepted, drafted) << "every draft was accepted: the test would not cover rejection";
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeGeneration,
                         ::testing::Values("stories260K.gguf", "stories260K-moe4x2-noise10.gguf",
                                           "stories260K-qwen3.gguf"),
                         model_param_name);

} // namespace
} // namespace pshard
