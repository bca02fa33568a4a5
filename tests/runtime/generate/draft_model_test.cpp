// Drafts from a small model (draft_model.h) on the shared stories models: stories260K
// drafting for its 4x-wide twin (which computes the same function) is right almost every
// time, so a pass checks several tokens; a draft model that disagrees (the noisy MoE
// upcycle) is rejected where it differs. Either way the tokens are plain decoding's,
// greedy and sampled. Vocabularies that differ are refused naming the difference.
#include "runtime/generate/draft_model.h"
#include "runtime/generate/generator.h"
#include "runtime/model/model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <thread>

namespace pshard {
namespace {

const std::string kDir = std::string(PSHARD_SHARED_DIR) + "/models/";

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<CpuSession> session;
};

Loaded load(const std::string& name, int64_t logit_rows) {
  Loaded l;
  auto m = Model::load(kDir + name);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  l.model = std::move(m).value();
  auto t = Tokenizer::from_gguf(l.model->file());
  EXPECT_TRUE(t.ok());
  l.tokenizer = std::move(t).value();
  SessionParams sp;
  sp.n_ctx = 256;
  sp.n_threads = 1;
  sp.max_logit_rows = logit_rows;
  auto s = CpuSession::create(*l.model, sp);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  l.session = std::move(s).value();
  return l;
}

GenerateResult run(Loaded& target, Drafter* drafter, float temperature) {
  target.session->reset();
  SamplerParams sp;
  sp.temperature = temperature;
  sp.seed = 5;
  Sampler sampler(sp);
  GenerateParams gp;
  gp.n_predict = 64;
  gp.ignore_eos = true;
  gp.lookup.draft_max = drafter ? 8 : 0;
  gp.lookup.adaptive = false; // every drafted token checked: the counts say how many held
  gp.drafter = drafter;
  const std::vector<TokenId> prompt =
      target.tokenizer->encode("Once upon a time, there was a little dog", true, true);
  auto r = generate(*target.session, *target.tokenizer, sampler, prompt, gp);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

class DraftModel : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char* f : {"stories260K.gguf", "stories260K-x4-F32.gguf",
                          "stories260K-moe4x2-noise10.gguf", "llama-2-tiny-random.gguf"})
      if (!std::filesystem::exists(kDir + f))
        GTEST_SKIP() << "shared model " << f << " is not present";
  }
};

TEST_F(DraftModel, AWideTwinDraftsAlmostEverythingAndTheTokensStayPlain) {
  Loaded target = load("stories260K-x4-F32.gguf", 9);
  Loaded draft = load("stories260K.gguf", 1);
  ASSERT_TRUE(check_draft_vocabulary(*target.tokenizer, *draft.tokenizer).ok());
  for (float temperature : {0.0f, 0.9f}) {
    SCOPED_TRACE(temperature);
    const GenerateResult plain = run(target, nullptr, temperature);
    draft.session->reset();
    ModelDrafter drafter(*draft.session, target.tokenizer->n_vocab());
    const GenerateResult spec = run(target, &drafter, temperature);
    EXPECT_EQ(spec.generated, plain.generated);
    const GenerateTimings& t = spec.timings;
    EXPECT_EQ(t.n_decode_passes + t.n_accepted, 63);
    if (temperature == 0.0f) {
      EXPECT_GE(t.n_accepted * 10, t.n_drafted * 9) << t.n_accepted << " of " << t.n_drafted;
      EXPECT_LE(t.n_decode_passes, 12) << "about 8 tokens a pass";
    }
  }
}

TEST_F(DraftModel, ADraftThatDisagreesIsRejectedWhereItDiffers) {
  Loaded target = load("stories260K.gguf", 9);
  Loaded draft = load("stories260K-moe4x2-noise10.gguf", 1);
  const GenerateResult plain = run(target, nullptr, 0.0f);
  ModelDrafter drafter(*draft.session, target.tokenizer->n_vocab());
  const GenerateResult spec = run(target, &drafter, 0.0f);
  EXPECT_EQ(spec.generated, plain.generated);
  EXPECT_GT(spec.timings.n_accepted, 0);
  EXPECT_LT(spec.timings.n_accepted, spec.timings.n_drafted);
}

// --draft-p-min: a draft is the draft model's greedy continuation up to the first token
// it gives less than p_min probability, computed here from a second session's logits.
TEST_F(DraftModel, ADraftStopsAtTheFirstUnsureToken) {
  Loaded draft = load("stories260K.gguf", 1);
  Loaded check = load("stories260K.gguf", 1);
  const std::vector<TokenId> prompt =
      draft.tokenizer->encode("Once upon a time, there", true, true);
  constexpr int64_t kLimit = 12;
  std::vector<size_t> sizes;
  for (float p_min : {0.0f, 0.5f, 0.9f}) {
    SCOPED_TRACE(p_min);
    draft.session->reset();
    ModelDrafter drafter(*draft.session, draft.tokenizer->n_vocab(), p_min);
    auto got = drafter.draft(prompt, kLimit);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    check.session->reset();
    auto logits = check.session->decode(prompt);
    std::vector<TokenId> want;
    while (logits.ok() && static_cast<int64_t>(want.size()) < kLimit) {
      const std::vector<float> l(logits->begin(), logits->end());
      const auto top = static_cast<TokenId>(std::max_element(l.begin(), l.end()) - l.begin());
      double sum = 0;
      for (float x : l)
        sum += std::exp(double(x) - double(l[static_cast<size_t>(top)]));
      if (1.0 / sum < p_min)
        break;
      want.push_back(top);
      const TokenId feed[] = {top};
      logits = check.session->decode(feed);
    }
    ASSERT_TRUE(logits.ok());
    EXPECT_EQ(*got, want);
    sizes.push_back(got->size());
  }
  EXPECT_EQ(sizes.front(), static_cast<size_t>(kLimit)) << "p_min 0: the whole limit";
  EXPECT_LT(sizes.back(), sizes.front()) << "p_min 0.9 stopped somewhere";
  EXPECT_FALSE(check_draft_p_min(1.5f).ok());
  EXPECT_FALSE(check_draft_p_min(std::nanf("")).ok());
  EXPECT_TRUE(check_draft_p_min(kDefaultDraftPMin).ok());
}

// A drafter whose tokens are always wrong and cost 2 ms each (a draft model far slower
// than the target's passes): after the first draft the adaptive policy asks it for one
// token a pass (kept unchecked, to go on learning the odds), never a long draft again.
class SlowWrongDrafter final : public Drafter {
public:
  Result<std::vector<TokenId>> draft(std::span<const TokenId> history, int64_t limit) override {
    limits.push_back(limit);
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * limit));
    return std::vector<TokenId>(static_cast<size_t>(limit), history.back() == 3 ? 4 : 3);
  }
  std::vector<int64_t> limits;
};

TEST_F(DraftModel, ACostlyDraftModelIsAskedOnlyForWhatPays) {
  Loaded target = load("stories260K.gguf", 9);
  const GenerateResult plain = run(target, nullptr, 0.0f);
  target.session->reset();
  SlowWrongDrafter drafter;
  SamplerParams greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy);
  GenerateParams gp;
  gp.n_predict = 24;
  gp.ignore_eos = true;
  gp.lookup.draft_max = 8; // adaptive
  gp.drafter = &drafter;
  const std::vector<TokenId> prompt =
      target.tokenizer->encode("Once upon a time, there was a little dog", true, true);
  auto r = generate(*target.session, *target.tokenizer, sampler, prompt, gp);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->generated,
            std::vector<TokenId>(plain.generated.begin(), plain.generated.begin() + 24));
  ASSERT_GT(drafter.limits.size(), 5u);
  EXPECT_EQ(drafter.limits.front(), 8) << "untimed: the whole draft tried once";
  for (size_t i = 1; i < drafter.limits.size(); ++i)
    EXPECT_EQ(drafter.limits[i], 1) << "pass " << i;
  EXPECT_LE(r->timings.n_drafted, 8) << "nothing checked after the first draft";
}

TEST_F(DraftModel, AnotherVocabularyIsRefused) {
  Loaded target = load("stories260K.gguf", 1);
  Loaded other = load("llama-2-tiny-random.gguf", 1);
  const Status st = check_draft_vocabulary(*target.tokenizer, *other.tokenizer);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("32000"), std::string::npos) << st.to_string();
}

} // namespace
} // namespace pshard
