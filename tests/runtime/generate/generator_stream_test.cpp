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

} // namespace
} // namespace pshard
