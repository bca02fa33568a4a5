// llama.cpp's other samplers through the C API (pshard_generate_params' typical_p ...
// dry_*): DRY keeps a greedy story from extending any repeat it forbids, with the default
// breakers and with none, in a context and a batch alike; the truncation stages and
// Mirostat each change a seeded answer and repeat it; bad values name their field.
#include "pshard/pshard.h"
#include "runtime/sampler/dry_penalty.h"
#include "tests/runtime/capi/capi_test_util.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace {

using namespace pshard::capi_test;

struct Answer {
  std::vector<pshard_token> tokens;
  std::string text;
};

bool collect(const pshard_token_event* e, void* user) {
  auto* a = static_cast<Answer*>(user);
  if (e->token >= 0)
    a->tokens.push_back(e->token);
  a->text.append(e->text, e->text_len);
  return true;
}

struct Model {
  Model() {
    EXPECT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK) << pshard_last_error();
    EXPECT_EQ(pshard_context_create(m, nullptr, &ctx), PSHARD_OK) << pshard_last_error();
    size_t n = 0;
    EXPECT_EQ(pshard_model_tokenize(m, "Once upon a time", 16, true, prompt, 16, &n), PSHARD_OK);
    n_prompt = n;
  }
  ~Model() {
    pshard_context_free(ctx);
    pshard_model_free(m);
  }
  pshard_status answer(const pshard_generate_params& gp, Answer* a) {
    pshard_context_reset(ctx);
    return pshard_context_generate(ctx, prompt, n_prompt, &gp, collect, a, nullptr);
  }
  Answer batch_answer(const pshard_generate_params& gp) {
    pshard_batch_params bp = pshard_batch_default_params();
    bp.n_seq_max = 2;
    pshard_batch* b = nullptr;
    EXPECT_EQ(pshard_batch_create(m, &bp, &b), PSHARD_OK) << pshard_last_error();
    pshard_seq_params sp = pshard_seq_default_params();
    sp.tokens = prompt;
    sp.n_tokens = n_prompt;
    pshard_seq* seq = nullptr;
    EXPECT_EQ(pshard_batch_add(b, &sp, &gp, &seq), PSHARD_OK) << pshard_last_error();
    while (pshard_batch_has_work(b))
      EXPECT_EQ(pshard_batch_step(b, nullptr), PSHARD_OK);
    Answer a;
    pshard_seq_event e = pshard_seq_event_init();
    bool got = false;
    while (pshard_seq_poll(seq, &e, &got) == PSHARD_OK && got) {
      if (e.token >= 0)
        a.tokens.push_back(e.token);
      a.text.append(e.text, e.text_len);
    }
    pshard_seq_free(seq);
    pshard_batch_free(b);
    return a;
  }
  // Per token: whether its piece holds one of `texts` (what DRY's breakers mean).
  std::vector<bool> holding(const std::vector<std::string>& texts) {
    std::vector<bool> out(static_cast<size_t>(pshard_model_n_vocab(m)));
    for (size_t t = 0; t < out.size(); ++t) {
      char piece[256];
      size_t len = 0;
      EXPECT_EQ(
          pshard_model_token_to_piece(m, static_cast<pshard_token>(t), piece, sizeof piece, &len),
          PSHARD_OK);
      const std::string s(piece, std::min(len, sizeof piece));
      for (const std::string& x : texts)
        out[t] = out[t] || s.find(x) != std::string::npos;
    }
    return out;
  }
  // How many generated tokens extended a repeat of at least allowed_length tokens.
  int repeats_extended(const Answer& a, const std::vector<bool>& breakers) {
    std::vector<pshard_token> history(prompt, prompt + n_prompt);
    pshard::DryParams p;
    p.multiplier = 1;
    pshard::DryPenalty dry;
    int n = 0;
    for (pshard_token t : a.tokens) {
      for (const auto& [token, length] : dry.repeats(p, &breakers, history))
        n += token == t;
      history.push_back(t);
    }
    return n;
  }
  pshard_model* m = nullptr;
  pshard_context* ctx = nullptr;
  pshard_token prompt[16];
  size_t n_prompt = 0;
};

pshard_generate_params greedy(int32_t n) {
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = n;
  gp.temperature = 0;
  gp.ignore_eos = true;
  return gp;
}

TEST(CApiSampler, DryKeepsAGreedyStoryFromExtendingRepeats) {
  SKIP_WITHOUT_MODEL();
  Model model;
  const auto defaults = model.holding(pshard::default_dry_sequence_breakers());
  const std::vector<bool> none(defaults.size(), false);
  pshard_generate_params gp = greedy(160);
  Answer plain;
  ASSERT_EQ(model.answer(gp, &plain), PSHARD_OK) << pshard_last_error();
  ASSERT_GT(model.repeats_extended(plain, defaults), 10); // the tiny model loops
  // A penalty of at least 100 outweighs any logit gap of this model.
  gp.dry_multiplier = 100;
  Answer dry;
  ASSERT_EQ(model.answer(gp, &dry), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(dry.tokens.size(), 160u);
  EXPECT_EQ(model.repeats_extended(dry, defaults), 0) << dry.text;
  EXPECT_GT(model.repeats_extended(dry, none), 0); // repeats across a breaker were free
  EXPECT_EQ(model.batch_answer(gp).tokens, dry.tokens);
  // No breakers (a non-NULL empty list): no repeat at all is extended.
  static const char* const kNone[] = {nullptr}; // non-NULL; none of it is read
  gp.dry_sequence_breakers = kNone;
  gp.n_dry_sequence_breakers = 0;
  Answer strict;
  ASSERT_EQ(model.answer(gp, &strict), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(model.repeats_extended(strict, none), 0) << strict.text;
  EXPECT_EQ(model.batch_answer(gp).tokens, strict.tokens);
  // Repeats up to dry_allowed_length are free: 8 lets the model repeat short phrases.
  gp.dry_sequence_breakers = nullptr;
  gp.dry_allowed_length = 8;
  Answer loose;
  ASSERT_EQ(model.answer(gp, &loose), PSHARD_OK);
  EXPECT_GT(model.repeats_extended(loose, defaults), 0);
}

// 48 tokens sampled from the whole vocabulary at temperature 1.5, with `seed`.
pshard_generate_params untruncated(uint64_t seed) {
  pshard_generate_params p = pshard_generate_default_params();
  p.n_predict = 48;
  p.temperature = 1.5f;
  p.top_k = 0;
  p.top_p = 1;
  p.min_p = 0;
  p.seed = seed;
  p.ignore_eos = true;
  return p;
}

TEST(CApiSampler, EachStageChangesASeededAnswerAndRepeatsIt) {
  SKIP_WITHOUT_MODEL();
  Model model;
  const pshard_generate_params base = untruncated(42);
  Answer plain;
  ASSERT_EQ(model.answer(base, &plain), PSHARD_OK) << pshard_last_error();
  const std::vector<std::pair<const char*, void (*)(pshard_generate_params&)>> stages = {
      {"typical_p", [](pshard_generate_params& g) { g.typical_p = 0.3f; }},
      {"top_n_sigma", [](pshard_generate_params& g) { g.top_n_sigma = 0.5f; }},
      {"xtc", [](pshard_generate_params& g) { g.xtc_probability = 1.0f; }},
      {"dynatemp", [](pshard_generate_params& g) { g.dynatemp_range = 1.4f; }},
      {"mirostat 1", [](pshard_generate_params& g) { g.mirostat = 1; }},
      {"mirostat 2",
       [](pshard_generate_params& g) {
         g.mirostat = 2;
         g.mirostat_tau = 2;
       }},
  };
  for (const auto& [name, set] : stages) {
    pshard_generate_params gp = base;
    set(gp);
    Answer a, again;
    ASSERT_EQ(model.answer(gp, &a), PSHARD_OK) << name << ": " << pshard_last_error();
    ASSERT_EQ(model.answer(gp, &again), PSHARD_OK);
    EXPECT_NE(a.tokens, plain.tokens) << name;
    EXPECT_EQ(a.tokens, again.tokens) << name;
    EXPECT_EQ(model.batch_answer(gp).tokens, a.tokens) << name;
  }
}

TEST(CApiSampler, SamplersOrderTheStagesAndLeaveOutTheUnnamed) {
  SKIP_WITHOUT_MODEL();
  Model model;
  const pshard_generate_params base = untruncated(7);
  Answer plain;
  ASSERT_EQ(model.answer(base, &plain), PSHARD_OK) << pshard_last_error();
  // pshard's order named is pshard's order.
  pshard_generate_params named = base;
  named.samplers = "penalties;dry;top_n_sigma;top_k;temperature;typ_p;top_p;min_p;xtc";
  Answer same;
  ASSERT_EQ(model.answer(named, &same), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(same.tokens, plain.tokens);
  // Without the temperature's stage the draws are those at temperature 1, on both paths.
  pshard_generate_params untempered = base;
  untempered.samplers = "top-k;Nucleus";
  pshard_generate_params at_one = base;
  at_one.temperature = 1.0f;
  Answer a, b;
  ASSERT_EQ(model.answer(untempered, &a), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(model.answer(at_one, &b), PSHARD_OK);
  EXPECT_NE(a.tokens, plain.tokens);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(model.batch_answer(untempered).tokens, a.tokens);
}

TEST(CApiSampler, BadValuesNameTheirField) {
  SKIP_WITHOUT_MODEL();
  Model model;
  const std::vector<std::pair<const char*, void (*)(pshard_generate_params&)>> bad = {
      {"typical_p", [](pshard_generate_params& g) { g.typical_p = 0; }},
      {"mirostat", [](pshard_generate_params& g) { g.mirostat = 3; }},
      {"xtc_probability", [](pshard_generate_params& g) { g.xtc_probability = 2; }},
      {"dry_base", [](pshard_generate_params& g) { g.dry_base = 0.5f; }},
      {"dry_allowed_length", [](pshard_generate_params& g) { g.dry_allowed_length = 0; }},
      {"dry_sequence_breakers",
       [](pshard_generate_params& g) {
         static const char* const kNull[] = {"\n", nullptr};
         g.dry_multiplier = 1;
         g.dry_sequence_breakers = kNull;
         g.n_dry_sequence_breakers = 2;
       }},
      {"samplers", [](pshard_generate_params& g) { g.samplers = "top_k;top_q"; }},
      {"samplers", [](pshard_generate_params& g) { g.samplers = "top_k;topk"; }},
  };
  for (const auto& [field, set] : bad) {
    pshard_generate_params gp = greedy(4);
    set(gp);
    Answer a;
    EXPECT_EQ(model.answer(gp, &a), PSHARD_ERROR_INVALID_ARGUMENT) << field;
    EXPECT_NE(std::string(pshard_last_error()).find(field), std::string::npos)
        << field << ": " << pshard_last_error();
  }
}

} // namespace
