// generate() under a grammar, with a model whose logits are a pseudo-random function
// of everything before them: the text is always a whole sentence of the grammar, ends
// with the end-of-generation token once nothing may follow, and speculative decoding
// gives the same tokens as one token a pass, greedy or sampled.
#include "runtime/generate/generator.h"
#include "runtime/grammar/output_constraint.h"
#include "runtime/sampler/random.h"
#include "runtime/tokenizer/bpe_tokenizer.h"
#include "tests/runtime/tokenizer/byte_level_vocab.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

// Byte tokens 0..255, a few merged ones, then "<|endoftext|>" (EOS).
std::unique_ptr<BpeTokenizer> tokenizer() {
  Vocabulary v;
  v.model = "gpt2";
  v.pre = "gpt-2";
  v.tokens = testing_vocab::byte_level_alphabet();
  for (const char* merged : {"{\"", "\":", ",\"", "ab", "12", "\"}"}) {
    v.tokens.push_back({testing_vocab::byte_level(merged)});
    v.merges.push_back(std::string(1, merged[0]) + " " + merged[1]);
  }
  v.tokens.push_back({"<|endoftext|>", 0, TokenType::kControl});
  v.eos_id = static_cast<TokenId>(v.tokens.size() - 1);
  auto tok = BpeTokenizer::create(std::move(v));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return tok.ok() ? std::move(tok).value() : nullptr;
}

// Each row: pseudo-random logits seeded by a hash of every token up to it, so a row
// depends only on the text before it, however the passes are cut.
class HashDecoder final : public Decoder {
public:
  HashDecoder(int32_t n_vocab, int64_t n_ctx) : n_vocab_(n_vocab), n_ctx_(n_ctx) {}

  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override {
    PSHARD_RETURN_IF_ERROR(decode_all(tokens).status());
    return std::span<const float>(logits_).subspan(logits_.size() - n_vocab_, n_vocab_);
  }
  Result<std::span<const float>> decode_all(std::span<const TokenId> tokens) override {
    PSHARD_RETURN_IF_ERROR(check_decode_input(tokens, n_vocab_, n_past(), n_ctx_));
    logits_.assign(tokens.size() * static_cast<size_t>(n_vocab_), 0.0f);
    for (size_t i = 0; i < tokens.size(); ++i) {
      kv_.push_back(tokens[i]);
      uint64_t h = 1469598103934665603ull;
      for (TokenId t : kv_)
        h = (h ^ static_cast<uint64_t>(t)) * 1099511628211ull;
      Pcg32 rng(h);
      for (int32_t v = 0; v < n_vocab_; ++v)
        logits_[i * n_vocab_ + v] = 4.0f * rng.next_float();
    }
    return std::span<const float>(logits_);
  }
  int64_t max_logit_rows() const override { return 8; }
  Status rewind(int64_t n_past) override {
    PSHARD_RETURN_IF_ERROR(check_rewind(n_past, this->n_past()));
    kv_.resize(static_cast<size_t>(n_past));
    return Status::ok_status();
  }
  int64_t n_past() const override { return static_cast<int64_t>(kv_.size()); }
  int64_t n_ctx() const override { return n_ctx_; }

private:
  int32_t n_vocab_;
  int64_t n_ctx_;
  std::vector<TokenId> kv_;
  std::vector<float> logits_;
};

constexpr std::string_view kRecord = R"(
root ::= "{\"id\":" [0-9]{1,3} ",\"name\":\"" [a-z]{1,6} "\",\"ok\":" ("true" | "false") "}"
)";

struct GenerationRun {
  std::vector<TokenId> tokens;
  std::string text;
  GenerateTimings timings;
};

GenerationRun run(const Tokenizer& tok, const std::shared_ptr<const TokenTrie>& trie, float temperature,
        uint64_t seed, int32_t draft_max) {
  SamplerParams sp;
  sp.temperature = temperature;
  sp.seed = seed;
  Sampler sampler(sp);
  auto filter = make_token_filter({std::string(kRecord), "", "", {}}, trie);
  EXPECT_TRUE(filter.ok()) << filter.status().to_string();
  sampler.set_filter(*filter);
  // A prompt that holds records, so prompt lookup has drafts to offer.
  const std::vector<TokenId> prompt =
      tok.encode(R"({"id":12,"name":"ab","ok":true} {"id":7,"name":"abc","ok":false} )", false);
  HashDecoder decoder(tok.n_vocab(), 256);
  GenerateParams gp;
  gp.n_predict = 100;
  gp.ignore_eos = true; // the grammar still ends it
  gp.lookup.draft_max = draft_max;
  gp.lookup.adaptive = false;
  auto r = generate(decoder, tok, sampler, prompt, gp);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? GenerationRun{r->generated, r->text, r->timings} : GenerationRun{};
}

TEST(GrammarGeneration, EveryTextIsAWholeRecordAndSpeculationChangesNoToken) {
  auto tok = tokenizer();
  ASSERT_NE(tok, nullptr);
  auto trie = TokenTrie::build(*tok);
  auto grammar = compile_output_constraint({std::string(kRecord), "", "", {}});
  ASSERT_TRUE(grammar.ok());
  int64_t drafted = 0, accepted = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const float temperature = seed % 3 == 0 ? 0.0f : 1.0f;
    const GenerationRun plain = run(*tok, trie, temperature, seed, 0);
    GrammarMatcher m(*grammar);
    EXPECT_TRUE(m.accept(plain.text) && m.can_end() && !m.can_continue())
        << "seed " << seed << ": " << plain.text;
    EXPECT_LT(plain.tokens.size(), 100u); // ended by the grammar, not by n_predict
    const GenerationRun speculative = run(*tok, trie, temperature, seed, 4);
    EXPECT_EQ(speculative.tokens, plain.tokens) << "seed " << seed;
    drafted += speculative.timings.n_drafted;
    accepted += speculative.timings.n_accepted;
  }
  EXPECT_GT(drafted, 0);  // speculation really ran
  EXPECT_GT(accepted, 0); // and some drafts were kept under the grammar
}

TEST(GrammarGeneration, ABadGrammarIsRefusedBeforeAnyDecoding) {
  auto tok = tokenizer();
  ASSERT_NE(tok, nullptr);
  auto filter = make_token_filter({"root ::= \"a\" | missing", "", "", {}}, TokenTrie::build(*tok));
  ASSERT_FALSE(filter.ok());
  EXPECT_EQ(filter.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(filter.status().message().find("in the grammar: grammar line 1, column 16: the rule "
                                           "`missing` is used but not defined"),
            std::string::npos)
      << filter.status().message();
  auto both = make_token_filter({"root ::= \"a\"", "{}", "", {}}, TokenTrie::build(*tok));
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("not both"), std::string::npos);
}

} // namespace
} // namespace pshard
