// The generation loop's token events with a byte-level BPE vocabulary: a
// character whose bytes arrive in several tokens is shown once, whole, when its
// last byte arrives; the end of generation flushes nothing broken.
#include "runtime/generate/generator.h"
#include "runtime/tokenizer/bpe_tokenizer.h"
#include "runtime/tokenizer/utf8.h"
#include "tests/runtime/tokenizer/byte_level_vocab.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

// A decoder whose logits make greedy sampling pick `script` in order.
class ScriptedDecoder final : public Decoder {
public:
  ScriptedDecoder(std::vector<TokenId> script, int32_t n_vocab)
      : script_(std::move(script)), logits_(n_vocab, 0.0f) {}

  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override {
    n_past_ += static_cast<int64_t>(tokens.size());
    std::fill(logits_.begin(), logits_.end(), 0.0f);
    if (next_ < script_.size())
      logits_[script_[next_++]] = 10.0f;
    return std::span<const float>(logits_);
  }
  int64_t n_past() const override { return n_past_; }
  int64_t n_ctx() const override { return 64; }

private:
  std::vector<TokenId> script_;
  size_t next_ = 0;
  std::vector<float> logits_;
  int64_t n_past_ = 0;
};

// Byte tokens 0..255 (token b is byte b), then "<|endoftext|>" (256, EOS).
std::unique_ptr<BpeTokenizer> byte_tokenizer() {
  Vocabulary v;
  v.model = "gpt2";
  v.pre = "gpt-2";
  v.tokens = testing_vocab::byte_level_alphabet();
  v.tokens.push_back({"<|endoftext|>", 0, TokenType::kControl});
  v.eos_id = 256;
  v.merges = {"a b"};
  auto tok = BpeTokenizer::create(std::move(v));
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return tok.ok() ? std::move(tok).value() : nullptr;
}

TEST(GenerateStream, ASplitCharacterIsShownWholeOnce) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  // "a", the four bytes of U+1F999, "é" in two bytes, then EOS.
  const std::vector<TokenId> script = {'a', 0xF0, 0x9F, 0xA6, 0x99, 0xC3, 0xA9, 256};
  ScriptedDecoder decoder(script, tok->n_vocab());
  SamplerParams sp;
  sp.temperature = 0;
  auto sampler = Sampler::create(sp);
  ASSERT_TRUE(sampler.ok()) << sampler.status().to_string();
  std::vector<std::string> shown;
  const TokenId prompt[] = {'x'};
  auto r = generate(decoder, *tok, *sampler, prompt, GenerateParams{}, [&](const TokenEvent& e) {
    shown.push_back(e.text);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(shown, (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\xA6\x99", "", "\xC3\xA9"}));
  for (const std::string& text : shown)
    EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(r->text, "a\xF0\x9F\xA6\x99\xC3\xA9");
  EXPECT_EQ(r->generated.size(), 7u); // EOS ended it and is not part of the output
}

TEST(GenerateStream, AnUnfinishedCharacterIsFlushedAtTheEnd) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  ScriptedDecoder decoder({'a', 0xE2, 0x82}, tok->n_vocab()); // the first two bytes of "€"
  SamplerParams sp;
  sp.temperature = 0;
  auto sampler = Sampler::create(sp);
  ASSERT_TRUE(sampler.ok());
  GenerateParams gp;
  gp.n_predict = 3;
  std::vector<TokenEvent> events;
  const TokenId prompt[] = {'x'};
  auto r = generate(decoder, *tok, *sampler, prompt, gp, [&](const TokenEvent& e) {
    events.push_back(e);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].text, "");
  EXPECT_EQ(events[3].id, kNoToken); // the final flush
  EXPECT_EQ(events[3].text, "\xE2\x82");
}

// A decoder whose greedy token after position p is script[p + 1], with every token's
// logits and rewind, and a record of the tokens its KV holds: a model whose text
// repeats itself in places, for the speculative loop's bookkeeping.
class PositionalDecoder final : public Decoder {
public:
  PositionalDecoder(std::vector<TokenId> script, int32_t n_vocab, int64_t n_ctx)
      : script_(std::move(script)), n_vocab_(n_vocab), n_ctx_(n_ctx) {}

  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override {
    PSHARD_RETURN_IF_ERROR(decode_all(tokens).status());
    return std::span<const float>(logits_).subspan(logits_.size() - n_vocab_, n_vocab_);
  }
  Result<std::span<const float>> decode_all(std::span<const TokenId> tokens) override {
    PSHARD_RETURN_IF_ERROR(check_decode_input(tokens, n_vocab_, n_past(), n_ctx_));
    logits_.assign(tokens.size() * n_vocab_, 0.0f);
    for (size_t i = 0; i < tokens.size(); ++i) {
      kv_.push_back(tokens[i]);
      const size_t next = kv_.size();
      logits_[i * n_vocab_ + static_cast<size_t>(next < script_.size() ? script_[next] : 0)] = 10;
    }
    ++passes_;
    return std::span<const float>(logits_);
  }
  int64_t max_logit_rows() const override { return 8; }
  Status rewind(int64_t n_past) override {
    PSHARD_RETURN_IF_ERROR(check_rewind(n_past, this->n_past()));
    kv_.resize(static_cast<size_t>(n_past));
    ++rewinds_;
    return Status::ok_status();
  }
  int64_t n_past() const override { return static_cast<int64_t>(kv_.size()); }
  int64_t n_ctx() const override { return n_ctx_; }

  const std::vector<TokenId>& kv() const { return kv_; }
  int passes() const { return passes_; }
  int rewinds() const { return rewinds_; }

private:
  std::vector<TokenId> script_;
  size_t n_vocab_;
  int64_t n_ctx_;
  std::vector<TokenId> kv_;
  std::vector<float> logits_;
  int passes_ = 0, rewinds_ = 0;
};

Result<GenerateResult> greedy(Decoder& d, const Tokenizer& tok, std::span<const TokenId> prompt,
                              int32_t n, int32_t draft_max, bool adaptive = false) {
  SamplerParams sp;
  sp.temperature = 0;
  Sampler sampler(sp);
  GenerateParams gp;
  gp.n_predict = n;
  gp.ignore_eos = true;
  gp.lookup.draft_max = draft_max;
  gp.lookup.adaptive = adaptive;
  return generate(d, tok, sampler, prompt, gp);
}

TEST(GenerateSpeculative, KeepsOnlyTheTokensPlainDecodingWouldHaveAndCountsThePasses) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  // Repeats "abcd" with detours: drafts of "abcd..." are partly right.
  const std::string text = "xabcdabcdyabcdzzabcdabcabcdabcdq";
  const std::vector<TokenId> script(text.begin(), text.end());
  const std::vector<TokenId> prompt(script.begin(), script.begin() + 9); // "xabcdabcd"
  const int32_t n = static_cast<int32_t>(script.size() - prompt.size());
  PositionalDecoder plain_d(script, tok->n_vocab(), 64);
  auto plain = greedy(plain_d, *tok, prompt, n, 0);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ(plain->generated, std::vector<TokenId>(script.begin() + 9, script.end()));
  for (int32_t draft : {1, 2, 4, 7}) {
    SCOPED_TRACE("draft " + std::to_string(draft));
    PositionalDecoder d(script, tok->n_vocab(), 64);
    auto r = greedy(d, *tok, prompt, n, draft);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->generated, plain->generated);
    // The KV cache holds the prompt and every generated token but the last (never fed).
    EXPECT_EQ(d.kv(), std::vector<TokenId>(script.begin(), script.end() - 1));
    const GenerateTimings& t = r->timings;
    EXPECT_EQ(t.n_decode_passes, d.passes() - 1); // the prompt's pass is not counted
    EXPECT_EQ(t.n_decode_passes + t.n_accepted, n - 1);
    EXPECT_GT(t.n_accepted, 0);
    EXPECT_LT(t.n_accepted, t.n_drafted); // the detours reject drafts
    EXPECT_GT(d.rewinds(), 0);
  }
}

TEST(GenerateSpeculative, AdaptiveCheckingKeepsThePlainTokens) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  const std::string text = "xabcdabcdyabcdzzabcdabcabcdabcdqabcdabcdabcdabcdabcd";
  const std::vector<TokenId> script(text.begin(), text.end());
  const std::vector<TokenId> prompt(script.begin(), script.begin() + 9);
  const int32_t n = static_cast<int32_t>(script.size() - prompt.size());
  PositionalDecoder d(script, tok->n_vocab(), 64);
  auto r = greedy(d, *tok, prompt, n, 7, /*adaptive=*/true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->generated, std::vector<TokenId>(script.begin() + 9, script.end()));
  EXPECT_EQ(d.kv(), std::vector<TokenId>(script.begin(), script.end() - 1));
  EXPECT_EQ(r->timings.n_decode_passes + r->timings.n_accepted, n - 1);
}

TEST(GenerateSpeculative, StopsWhereThePlainLoopStops) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  const std::string text = "abababababababababababab";
  const std::vector<TokenId> script(text.begin(), text.end());
  const std::vector<TokenId> prompt(script.begin(), script.begin() + 4);
  // At n_predict (mid-draft), and at a full context.
  for (auto [n, n_ctx] :
       {std::pair{3, 64}, std::pair{6, 64}, std::pair{-1, 12}, std::pair{50, 9}}) {
    SCOPED_TRACE("n_predict " + std::to_string(n) + " n_ctx " + std::to_string(n_ctx));
    PositionalDecoder plain_d(script, tok->n_vocab(), n_ctx);
    auto plain = greedy(plain_d, *tok, prompt, n, 0);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    PositionalDecoder d(script, tok->n_vocab(), n_ctx);
    auto r = greedy(d, *tok, prompt, n, 7);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->generated, plain->generated);
    EXPECT_EQ(d.kv(), plain_d.kv()); // no drafted token left behind: a next call goes on
    EXPECT_GT(r->timings.n_accepted, 0);
  }
  // At an end-of-generation token, wherever it falls in a pass's drafted rows.
  for (size_t eos_at = 6; eos_at < 20; ++eos_at) {
    SCOPED_TRACE("end of generation at " + std::to_string(eos_at));
    std::vector<TokenId> with_eos = script;
    with_eos[eos_at] = 256; // the byte tokenizer's <|endoftext|>
    SamplerParams sp;
    sp.temperature = 0;
    Sampler plain_sampler(sp), sampler(sp);
    GenerateParams gp;
    gp.n_predict = 40;
    PositionalDecoder plain_d(with_eos, tok->n_vocab(), 64);
    auto plain = generate(plain_d, *tok, plain_sampler, prompt, gp);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    EXPECT_EQ(plain->generated.size(), eos_at - prompt.size());
    PositionalDecoder d(with_eos, tok->n_vocab(), 64);
    gp.lookup.draft_max = 7;
    gp.lookup.adaptive = false;
    auto r = generate(d, *tok, sampler, prompt, gp);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->generated, plain->generated);
    EXPECT_EQ(d.kv(), plain_d.kv());
  }
}

TEST(GenerateSpeculative, ADecoderWithOneLogitRowDecodesAsBefore) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  ScriptedDecoder decoder({'a', 'b', 'a', 'b', 'a', 'b'}, tok->n_vocab());
  const TokenId prompt[] = {'a', 'b', 'a', 'b'};
  auto r = greedy(decoder, *tok, prompt, 6, 4);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->text, "ababab");
  EXPECT_EQ(r->timings.n_drafted, 0);
  EXPECT_EQ(r->timings.n_decode_passes, 5);
  GenerateParams bad;
  bad.lookup.ngram_min = 0;
  Sampler sampler(SamplerParams{});
  auto refused = generate(decoder, *tok, sampler, prompt, bad);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

// A decoder already holding tokens (a kept sequence, GenerateParams::held): the sampler's
// penalties see them as the prompt's start, so a kept prefix samples as decoding it would.
TEST(GenerateHeld, PenaltiesSeeTheTokensTheDecoderHeldBefore) {
  auto tok = byte_tokenizer();
  ASSERT_NE(tok, nullptr);
  class Flat final : public Decoder { // 'a' a little above 'b', always
  public:
    explicit Flat(int32_t n_vocab) : logits_(static_cast<size_t>(n_vocab), 0.0f) {
      logits_['a'] = 10.0f;
      logits_['b'] = 9.0f;
    }
    Result<std::span<const float>> decode(std::span<const TokenId> tokens) override {
      n_past_ += static_cast<int64_t>(tokens.size());
      return std::span<const float>(logits_);
    }
    int64_t n_past() const override { return n_past_; }
    int64_t n_ctx() const override { return 64; }

  private:
    std::vector<float> logits_;
    int64_t n_past_ = 0;
  };
  SamplerParams sp;
  sp.temperature = 0;
  sp.repeat_penalty = 2.0f; // 'a' at 5 once it is in the history
  const TokenId prompt[] = {'x'}, held[] = {'a'};
  for (const bool with_held : {false, true}) {
    Flat d(tok->n_vocab());
    Sampler sampler(sp);
    GenerateParams gp;
    gp.n_predict = 1;
    if (with_held)
      gp.held = held;
    auto r = generate(d, *tok, sampler, prompt, gp);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->generated, std::vector<TokenId>{with_held ? TokenId{'b'} : TokenId{'a'}});
  }
}

} // namespace
} // namespace pshard
