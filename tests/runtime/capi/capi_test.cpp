// The C API (pshard.h) as an app uses it: load with and without a schedule, generate
// with a callback, change the VRAM budget, read statistics, write a trace; errors as
// status codes with a message; parameter structs from an older caller (smaller size).
#include "pshard/pshard.h"
#include "runtime/gguf/gguf_file.h"
#include "tests/runtime/capi/capi_test_util.h"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace {

using namespace pshard::capi_test;

struct Collected {
  std::vector<pshard_token> tokens;
  std::string text;
};

bool collect(const pshard_token_event* e, void* user) {
  auto* c = static_cast<Collected*>(user);
  if (e->token >= 0)
    c->tokens.push_back(e->token);
  c->text.append(e->text, e->text_len);
  return true;
}

std::vector<pshard_token> generate(pshard_model* m, pshard_context* ctx, int n) {
  pshard_token prompt[64];
  size_t n_prompt = 0;
  EXPECT_EQ(pshard_model_tokenize(m, "Once upon a time", 16, true, prompt, 64, &n_prompt),
            PSHARD_OK);
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = n;
  gp.temperature = 0;
  Collected c;
  pshard_generate_result r = pshard_generate_result_init();
  EXPECT_EQ(pshard_context_generate(ctx, prompt, n_prompt, &gp, collect, &c, &r), PSHARD_OK)
      << pshard_last_error();
  EXPECT_EQ(r.n_generated, static_cast<int64_t>(c.tokens.size()));
  return c.tokens;
}

TEST(CApi, GeneratesTheReferenceTokensOnTheCpu) {
  SKIP_WITHOUT_MODEL();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK) << pshard_last_error();
  EXPECT_FALSE(pshard_model_has_schedule(m));
  pshard_context* ctx = nullptr;
  ASSERT_EQ(pshard_context_create(m, nullptr, &ctx), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(generate(m, ctx, 16), kExpected);
  pshard_context_free(ctx);
  pshard_model_free(m);
}

TEST(CApi, RunsAScheduleOnTheEmulatedGpuAndReportsStatistics) {
  SKIP_WITHOUT_MODEL();
  std::vector<uint64_t> budgets;
  const std::string schedule = schedule_file(&budgets);
  pshard_model_params mp = pshard_model_default_params();
  mp.schedule_path = schedule.c_str();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), &mp, &m), PSHARD_OK) << pshard_last_error();
  size_t n = 0;
  uint64_t got[8];
  ASSERT_EQ(pshard_model_schedule_budgets(m, got, 8, &n), PSHARD_OK);
  ASSERT_EQ(n, budgets.size());
  pshard_context_params cp = pshard_context_default_params();
  cp.backend = PSHARD_BACKEND_EMU;
  cp.vram_budget = budgets.back();
  cp.emu_pcie_gbps = 20;
  cp.trace = true;
  pshard_context* ctx = nullptr;
  ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(generate(m, ctx, 16), kExpected);

  // The app needs VRAM back: below the minimum is refused, the context goes on.
  EXPECT_EQ(pshard_context_set_vram_budget(ctx, budgets.front() / 2), PSHARD_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(pshard_last_error()).find("keeps its budget"), std::string::npos);
  ASSERT_EQ(pshard_context_set_vram_budget(ctx, budgets.front()), PSHARD_OK) << pshard_last_error();
  pshard_context_reset(ctx);
  EXPECT_EQ(generate(m, ctx, 16), kExpected);

  pshard_stats st = pshard_stats_init();
  ASSERT_EQ(pshard_context_get_stats(ctx, &st), PSHARD_OK);
  EXPECT_EQ(st.vram_budget, budgets.front());
  EXPECT_LE(st.peak_vram_bytes, budgets.back());
  EXPECT_GT(st.bytes_streamed, 0u);
  EXPECT_EQ(st.budget_switches, 1);
  ASSERT_GE(st.n_plans, 2u);
  pshard_plan_stats ps = pshard_plan_stats_init();
  ASSERT_EQ(pshard_context_get_plan_stats(ctx, 0, &ps), PSHARD_OK);
  EXPECT_GT(ps.passes, 0);
  EXPECT_GT(ps.predicted_ms_per_pass, 0);
  EXPECT_GT(ps.measured_ms_per_pass, 0);
  EXPECT_STREQ(ps.strategy, "gpu-only");
  EXPECT_EQ(pshard_context_get_plan_stats(ctx, 99, &ps), PSHARD_ERROR_OUT_OF_RANGE);

  const std::string trace = ::testing::TempDir() + "/capi_trace.json";
  ASSERT_EQ(pshard_context_write_trace(ctx, trace.c_str()), PSHARD_OK) << pshard_last_error();
  std::ifstream in(trace);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(text.find("device copy"), std::string::npos);
  pshard_context_free(ctx);
  pshard_model_free(m);
}

TEST(CApi, ErrorsAreStatusCodesWithAMessage) {
  pshard_model* m = nullptr;
  EXPECT_EQ(pshard_model_load(nullptr, nullptr, &m), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("gguf_path"), std::string::npos);
  const pshard_status s = pshard_model_load("/nonexistent/model.gguf", nullptr, &m);
  EXPECT_NE(s, PSHARD_OK);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(pshard_last_error()).find("/nonexistent/model.gguf"), std::string::npos);
  EXPECT_STREQ(pshard_status_name(PSHARD_ERROR_OUT_OF_MEMORY), "out of memory");
  EXPECT_EQ(pshard_context_decode(nullptr, nullptr, 0, nullptr), PSHARD_ERROR_INVALID_ARGUMENT);
  SKIP_WITHOUT_MODEL();
  pshard_model_params mp = pshard_model_default_params();
  mp.schedule_path = "/nonexistent/model.pshard";
  EXPECT_NE(pshard_model_load(kModel.c_str(), &mp, &m), PSHARD_OK);
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK);
  pshard_context_params cp = pshard_context_default_params();
  cp.backend = PSHARD_BACKEND_CUDA;
  pshard_context* ctx = nullptr;
  EXPECT_NE(pshard_context_create(m, &cp, &ctx), PSHARD_OK); // no CUDA in this build
  EXPECT_FALSE(std::string(pshard_last_error()).empty());
  pshard_token few[2];
  size_t n = 0;
  EXPECT_EQ(pshard_model_tokenize(m, "Once upon a time", 16, true, few, 2, &n),
            PSHARD_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(n, 5u); // the count needed
  pshard_model_free(m);
}

// Prompt-lookup speculation through the C API: the context reserves the rows, a
// generate call drafts, the tokens are plain generation's, the result counts the
// drafts; an older caller's generate params (without draft_max) do not speculate.
TEST(CApi, SpeculativeGenerationGivesThePlainTokensAndCountsItsDrafts) {
  SKIP_WITHOUT_MODEL();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK);
  pshard_context_params cp = pshard_context_default_params();
  EXPECT_EQ(cp.draft_max, 0);
  pshard_context* ctx = nullptr;
  cp.draft_max = -1;
  EXPECT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("draft_max"), std::string::npos);
  cp.draft_max = 6;
  ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK) << pshard_last_error();
  const std::string text = "Once upon a time, there was a little girl. Once upon a time";
  pshard_token prompt[64];
  size_t n_prompt = 0;
  ASSERT_EQ(pshard_model_tokenize(m, text.data(), text.size(), true, prompt, 64, &n_prompt),
            PSHARD_OK);
  pshard_generate_params gp = pshard_generate_default_params();
  EXPECT_EQ(gp.draft_max, 0);
  EXPECT_EQ(gp.lookup_ngram_min, 2);
  EXPECT_EQ(gp.lookup_ngram_max, 4);
  EXPECT_TRUE(gp.lookup_adaptive);
  gp.n_predict = 40;
  gp.temperature = 0;
  auto run = [&](Collected* c) {
    pshard_generate_result r = pshard_generate_result_init();
    pshard_context_reset(ctx);
    EXPECT_EQ(pshard_context_generate(ctx, prompt, n_prompt, &gp, collect, c, &r), PSHARD_OK)
        << pshard_last_error();
    return r;
  };
  Collected plain, spec, old;
  const pshard_generate_result plain_r = run(&plain);
  EXPECT_EQ(plain_r.n_drafted, 0);
  EXPECT_EQ(plain_r.n_decode_passes, plain_r.n_generated - 1);
  gp.draft_max = 6;
  gp.lookup_adaptive = false; // every drafted token checked: counts independent of timing
  const pshard_generate_result r = run(&spec);
  EXPECT_EQ(spec.tokens, plain.tokens);
  EXPECT_GT(r.n_drafted, 0);
  EXPECT_GT(r.n_accepted, 0);
  EXPECT_LE(r.n_accepted, r.n_drafted);
  EXPECT_EQ(r.n_decode_passes + r.n_accepted, r.n_generated - 1);
  gp.size = offsetof(pshard_generate_params, draft_max); // an older caller
  const pshard_generate_result old_r = run(&old);
  EXPECT_EQ(old.tokens, plain.tokens);
  EXPECT_EQ(old_r.n_drafted, 0);
  pshard_context_free(ctx);
  pshard_model_free(m);
}

// An app's own speculative decoding: a draft model (here the Q8_0 copy of the model) in a
// second context guesses 4 tokens, the target checks them in one decode_all, keeps the
// greedy matches and rewinds the rest — and generates the reference tokens.
TEST(CApi, AnAppsDraftModelLoopGivesTheReferenceTokens) {
  SKIP_WITHOUT_MODEL();
  const std::string draft_path =
      std::filesystem::path(kModel).parent_path().string() + "/stories260K-Q8_0-mixed.gguf";
  if (!std::filesystem::exists(draft_path))
    GTEST_SKIP() << draft_path << " is not present";
  pshard_model *target = nullptr, *drafter = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &target), PSHARD_OK);
  ASSERT_EQ(pshard_model_load(draft_path.c_str(), nullptr, &drafter), PSHARD_OK);
  pshard_context_params cp = pshard_context_default_params();
  pshard_context *t = nullptr, *d = nullptr;
  ASSERT_EQ(pshard_context_create(drafter, &cp, &d), PSHARD_OK);
  const pshard_token four[] = {1, 2, 3, 4};
  ASSERT_EQ(pshard_context_create(target, &cp, &t), PSHARD_OK);
  EXPECT_EQ(pshard_context_decode_all(t, four, 2, nullptr), PSHARD_ERROR_INVALID_ARGUMENT)
      << "a context made without draft_max holds one row of logits";
  pshard_context_free(t);
  cp.draft_max = 4;
  ASSERT_EQ(pshard_context_create(target, &cp, &t), PSHARD_OK);
  EXPECT_EQ(pshard_context_rewind(t, 1), PSHARD_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(pshard_context_decode_all(nullptr, four, 1, nullptr), PSHARD_ERROR_INVALID_ARGUMENT);

  const int64_t n_vocab = pshard_model_n_vocab(target);
  auto argmax = [&](const float* row) {
    return static_cast<pshard_token>(std::max_element(row, row + n_vocab) - row);
  };
  pshard_token prompt[64];
  size_t n_prompt = 0;
  ASSERT_EQ(pshard_model_tokenize(target, "Once upon a time", 16, true, prompt, 64, &n_prompt),
            PSHARD_OK);
  const float* logits = nullptr;
  ASSERT_EQ(pshard_context_decode(t, prompt, n_prompt, &logits), PSHARD_OK);
  ASSERT_EQ(pshard_context_decode(d, prompt, n_prompt, nullptr), PSHARD_OK);
  std::vector<pshard_token> seq(prompt, prompt + n_prompt); // what the target's KV holds, then more
  std::vector<pshard_token> out = {argmax(logits)};
  int passes = 0, kept = 0;
  while (out.size() < kExpected.size()) {
    // The drafter drops its rejected guesses, takes the kept tokens it lacks, then
    // guesses 4 more greedily.
    const int64_t base = pshard_context_n_past(t);
    ASSERT_EQ(pshard_context_rewind(d, std::min(pshard_context_n_past(d), base)), PSHARD_OK);
    for (int64_t at = pshard_context_n_past(d); at < base; ++at)
      ASSERT_EQ(pshard_context_decode(d, &seq[static_cast<size_t>(at)], 1, nullptr), PSHARD_OK);
    std::vector<pshard_token> input = {out.back()};
    const float* dl = nullptr;
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(pshard_context_decode(d, &input.back(), 1, &dl), PSHARD_OK);
      input.push_back(argmax(dl));
    }
    ASSERT_EQ(pshard_context_decode_all(t, input.data(), input.size(), &logits), PSHARD_OK)
        << pshard_last_error();
    ++passes;
    size_t row = 0;
    for (; row < input.size() && out.size() < kExpected.size(); ++row) {
      out.push_back(argmax(logits + row * n_vocab));
      if (row + 1 == input.size() || out.back() != input[row + 1])
        break;
      ++kept;
    }
    ASSERT_EQ(pshard_context_rewind(t, base + static_cast<int64_t>(row) + 1), PSHARD_OK);
    seq.insert(seq.end(), input.begin(), input.begin() + static_cast<std::ptrdiff_t>(row) + 1);
  }
  out.resize(kExpected.size());
  EXPECT_EQ(out, kExpected);
  EXPECT_GT(kept, 0) << "the drafter never guessed right: the test would not cover keeping";
  EXPECT_LT(passes, static_cast<int>(kExpected.size()) - 1);
  pshard_context_free(t);
  pshard_context_free(d);
  pshard_model_free(target);
  pshard_model_free(drafter);
}

TEST(CApi, AnOlderCallersSmallerParamsGetDefaultsForNewFields) {
  SKIP_WITHOUT_MODEL();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK);
  pshard_context_params cp = pshard_context_default_params();
  cp.n_threads = 1;
  cp.n_batch = -5;                                    // past the old size: must be ignored
  cp.size = offsetof(pshard_context_params, n_batch); // an older caller's struct
  pshard_context* ctx = nullptr;
  ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(pshard_context_n_threads(ctx), 1);
  pshard_stats st{};
  st.size = offsetof(pshard_stats, bytes_streamed); // reads only what it knows
  ASSERT_EQ(pshard_context_get_stats(ctx, &st), PSHARD_OK);
  EXPECT_EQ(st.bytes_streamed, 0u);
  pshard_context_free(ctx);
  pshard_model_free(m);
}

TEST(CApi, TokenizeExParsesControlTokensByDefaultAndFollowsTheModelsBos) {
  SKIP_WITHOUT_MODEL();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK);
  EXPECT_STREQ(pshard_model_load_warnings(m), "");
  const std::string text = "<s>Once";
  pshard_token ids[32];
  size_t n = 0;
  // NULL params: the defaults (the model's BOS, control tokens parsed).
  ASSERT_EQ(pshard_model_tokenize_ex(m, text.data(), text.size(), nullptr, ids, 32, &n), PSHARD_OK);
  const std::vector<pshard_token> parsed(ids, ids + n);
  ASSERT_GE(parsed.size(), 3u);
  EXPECT_EQ(parsed[0], 1);
  EXPECT_EQ(parsed[1], 1); // "<s>" in the text is BOS too
  pshard_tokenize_params tp = pshard_tokenize_default_params();
  tp.add_special = false;
  tp.parse_special = false;
  ASSERT_EQ(pshard_model_tokenize_ex(m, text.data(), text.size(), &tp, ids, 32, &n), PSHARD_OK);
  const std::vector<pshard_token> plain(ids, ids + n);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_GT(plain.size(), parsed.size() - 1);
  // An older caller's struct that ends before parse_special gets its default (true).
  tp = pshard_tokenize_default_params();
  tp.parse_special = false;
  tp.size = offsetof(pshard_tokenize_params, parse_special);
  ASSERT_EQ(pshard_model_tokenize_ex(m, text.data(), text.size(), &tp, ids, 32, &n), PSHARD_OK);
  EXPECT_EQ(std::vector<pshard_token>(ids, ids + n), parsed);
  // The first API's call parses control tokens as well.
  ASSERT_EQ(pshard_model_tokenize(m, text.data(), text.size(), true, ids, 32, &n), PSHARD_OK);
  EXPECT_EQ(std::vector<pshard_token>(ids, ids + n), parsed);
  EXPECT_EQ(pshard_model_tokenize_ex(nullptr, "x", 1, nullptr, ids, 32, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  pshard_model_free(m);
}

} // namespace
