// A context's draft model (pshard_context_params.draft_model, llama.cpp's -md): the
// tokens of plain decoding with the passes of speculative decoding, on the CPU and under
// a schedule on the emulated GPU at every budget; a draft model of another vocabulary is
// refused when the context is made. A batch's draft model (pshard_batch_params.draft_model,
// llama-server's -md) likewise, drafting for every sequence in shared passes of its own engine.
#include "pshard/pshard.h"
#include "tests/runtime/capi/capi_test_util.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace {

using namespace pshard::capi_test;

const std::string kShared = std::string(PSHARD_SHARED_DIR) + "/models/";

struct Generated {
  std::vector<pshard_token> tokens;
  pshard_generate_result result = pshard_generate_result_init();
};

Generated generate(pshard_model* m, pshard_context_params cp, int32_t draft_max,
                   float temperature) {
  pshard_context* c = nullptr;
  EXPECT_EQ(pshard_context_create(m, &cp, &c), PSHARD_OK) << pshard_last_error();
  const pshard_token prompt[] = {1, 403, 407, 261, 378}; // "Once upon a time"
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = 40;
  gp.temperature = temperature;
  gp.seed = 3;
  gp.ignore_eos = true;
  gp.draft_max = draft_max;
  gp.lookup_adaptive = false;
  Generated r;
  auto collect = [](const pshard_token_event* e, void* user) {
    if (e->token >= 0)
      static_cast<std::vector<pshard_token>*>(user)->push_back(e->token);
    return true;
  };
  EXPECT_EQ(pshard_context_generate(c, prompt, 5, &gp, collect, &r.tokens, &r.result), PSHARD_OK)
      << pshard_last_error();
  pshard_context_free(c);
  return r;
}

pshard_model* load(const std::string& path, const char* schedule = nullptr) {
  pshard_model_params mp = pshard_model_default_params();
  mp.schedule_path = schedule;
  pshard_model* m = nullptr;
  EXPECT_EQ(pshard_model_load(path.c_str(), &mp, &m), PSHARD_OK) << pshard_last_error();
  return m;
}

TEST(CApiDraft, ADraftModelKeepsThePlainTokens) {
  SKIP_WITHOUT_MODEL();
  const std::string wide = kShared + "stories260K-x4-F32.gguf",
                    noisy = kShared + "stories260K-moe4x2-noise10.gguf";
  if (!std::filesystem::exists(wide) || !std::filesystem::exists(noisy))
    GTEST_SKIP() << "the shared stories260K variants are not present";
  pshard_model* target = load(wide);
  pshard_model* draft = load(kModel);
  pshard_context_params cp = pshard_context_default_params();
  cp.n_threads = 1;
  cp.n_ctx = 128;
  cp.draft_max = 8;
  for (float temperature : {0.0f, 0.8f}) {
    SCOPED_TRACE(temperature);
    const Generated plain = generate(target, cp, 0, temperature);
    pshard_context_params with = cp;
    with.draft_model = draft;
    const Generated spec = generate(target, with, 8, temperature);
    EXPECT_EQ(spec.tokens, plain.tokens);
    EXPECT_GT(spec.result.n_drafted, 0);
    EXPECT_EQ(spec.result.n_decode_passes + spec.result.n_accepted, 39);
  }

  // Under a schedule on emu (stories260K's), with the noisy MoE drafting: every budget
  // gives the CPU's plain tokens.
  std::vector<uint64_t> budgets;
  const std::string schedule = schedule_file(&budgets);
  pshard_model* scheduled = load(kModel, schedule.c_str());
  pshard_model* noisy_draft = load(noisy);
  const Generated want = generate(draft, cp, 0, 0.0f);
  for (uint64_t budget : budgets) {
    pshard_context_params emu = cp;
    emu.backend = PSHARD_BACKEND_EMU;
    emu.vram_budget = budget;
    emu.draft_model = noisy_draft;
    emu.draft_p_min = 0; // every draft whole: with 0.75 the noisy model's misses stop it
    const Generated got = generate(scheduled, emu, 8, 0.0f);
    EXPECT_EQ(got.tokens, want.tokens) << "budget " << budget;
    EXPECT_GT(got.result.n_accepted, 0);
    EXPECT_LT(got.result.n_accepted, got.result.n_drafted)
        << "the noisy draft is rejected at times";
  }

  // Another vocabulary: refused naming both sizes.
  pshard_model* other = load(kShared + "llama-2-tiny-random.gguf");
  pshard_context_params bad = cp;
  bad.draft_model = other;
  pshard_context* c = nullptr;
  EXPECT_EQ(pshard_context_create(draft, &bad, &c), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("32000"), std::string::npos)
      << pshard_last_error();
  for (pshard_model* m : {target, draft, scheduled, noisy_draft, other})
    pshard_model_free(m);
}

struct BatchRun {
  std::vector<std::vector<pshard_token>> tokens; // per request
  pshard_batch_stats stats{};
};

// Three sampled requests side by side on one batch; `draft` drafts for them when given.
BatchRun run_batch(pshard_model* m, pshard_model* draft) {
  pshard_batch_params bp = pshard_batch_default_params();
  bp.n_seq_max = 3;
  bp.n_batch = 32;
  bp.n_threads = 1;
  bp.n_ctx = 128;
  bp.draft_max = draft ? 8 : 0;
  bp.draft_model = draft;
  pshard_batch* b = nullptr;
  BatchRun r;
  EXPECT_EQ(pshard_batch_create(m, &bp, &b), PSHARD_OK) << pshard_last_error();
  if (!b)
    return r;
  std::vector<pshard_seq*> seqs;
  const std::string texts[] = {"Once upon a time", "The little dog", "Lily and Ben went to the"};
  for (size_t i = 0; i < std::size(texts); ++i) {
    pshard_seq_params sp = pshard_seq_default_params();
    sp.text = texts[i].c_str();
    sp.text_len = texts[i].size();
    pshard_generate_params gp = pshard_generate_default_params();
    gp.n_predict = 32;
    gp.temperature = 0.8f;
    gp.seed = 10 + i;
    gp.ignore_eos = true;
    pshard_seq* seq = nullptr;
    EXPECT_EQ(pshard_batch_add(b, &sp, &gp, &seq), PSHARD_OK) << pshard_last_error();
    seqs.push_back(seq);
  }
  while (pshard_batch_has_work(b))
    EXPECT_EQ(pshard_batch_step(b, nullptr), PSHARD_OK) << pshard_last_error();
  for (pshard_seq* seq : seqs) {
    r.tokens.emplace_back();
    pshard_seq_event e = pshard_seq_event_init();
    bool got = false;
    while (pshard_seq_poll(seq, &e, &got) == PSHARD_OK && got)
      if (e.token >= 0)
        r.tokens.back().push_back(e.token);
    pshard_seq_free(seq);
  }
  r.stats.size = sizeof r.stats;
  EXPECT_EQ(pshard_batch_get_stats(b, &r.stats), PSHARD_OK);
  pshard_batch_free(b);
  return r;
}

TEST(CApiDraft, ABatchDraftsForEachSequenceAndKeepsThePlainTokens) {
  SKIP_WITHOUT_MODEL();
  const std::string wide = kShared + "stories260K-x4-F32.gguf";
  if (!std::filesystem::exists(wide))
    GTEST_SKIP() << "the shared stories260K variants are not present";
  pshard_model* target = load(wide);
  pshard_model* draft = load(kModel);
  const BatchRun plain = run_batch(target, nullptr);
  const BatchRun spec = run_batch(target, draft);
  ASSERT_EQ(plain.tokens.size(), 3u);
  EXPECT_EQ(spec.tokens, plain.tokens);
  for (const auto& t : plain.tokens)
    EXPECT_EQ(t.size(), 32u);
  EXPECT_EQ(plain.stats.draft_tokens, 0);
  EXPECT_GT(spec.stats.accepted_draft_tokens, 0) << spec.stats.draft_tokens << " drafted";
  EXPECT_GT(spec.stats.draft_passes, 0);
  EXPECT_EQ(plain.stats.draft_passes, 0);

  // Refused when the batch is made: another vocabulary, a probability past 1.
  pshard_model* other = load(kShared + "llama-2-tiny-random.gguf");
  pshard_batch_params bp = pshard_batch_default_params();
  bp.draft_max = 4;
  bp.draft_model = other;
  pshard_batch* b = nullptr;
  EXPECT_EQ(pshard_batch_create(draft, &bp, &b), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("32000"), std::string::npos)
      << pshard_last_error();
  // A draft model whose layers keep a recurrent state (it could not drop rejected drafts).
  pshard::ModelSpec next;
  next.arch = "qwen3next";
  next.n_layer = 4; // three recurrent layers, then one of attention
  next.n_embd = 64;
  next.n_head = 4;
  next.n_head_kv = 2;
  next.n_expert = 4;
  next.n_expert_used = 2;
  next.n_ff = 64;
  next.tokenizer_from = kModel;
  const std::string recurrent = ::testing::TempDir() + "/draft_qwen3next.gguf";
  ASSERT_TRUE(pshard::write_model(next, recurrent).ok());
  pshard_model* stateful = load(recurrent);
  ASSERT_NE(stateful, nullptr);
  bp.draft_model = stateful;
  EXPECT_EQ(pshard_batch_create(draft, &bp, &b), PSHARD_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(pshard_last_error()).find("recurrent state"), std::string::npos)
      << pshard_last_error();
  pshard_model_free(stateful);
  bp.draft_model = target;
  bp.draft_p_min = 1.5f;
  EXPECT_EQ(pshard_batch_create(draft, &bp, &b), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("--draft-p-min"), std::string::npos)
      << pshard_last_error();
  EXPECT_EQ(b, nullptr);
  for (pshard_model* m : {target, draft, other})
    pshard_model_free(m);
}

} // namespace
