// Image entries in the batched CPU engine (BatchEntry's embedding rows and M-RoPE
// positions): a qwen2vl sequence with an image in its prompt, prefilled in chunks that cut
// through the image and share their passes with a text sequence, gets bit for bit the
// logits a CpuSession gives it alone through DecodeExtras — what ImagePromptDecoder
// drives — and the text sequence its own; engines that cannot take such entries refuse
// them.
#include "runtime/batch/batched_cpu_session.h"
#include "runtime/batch/per_sequence_decoder.h"
#include "runtime/model/mrope_positions.h"
#include "tests/runtime/vision/vision_test_util.h"

#include <gtest/gtest.h>
#include <random>

namespace pshard {
namespace {

constexpr int64_t kBefore = 5, kAfter = 4, kSteps = 3;
const ImageSpan kImage{kBefore, 3, 2};

struct Fixture {
  std::unique_ptr<Model> model;
  std::vector<float> rows; // the image's embedding rows
  std::vector<TokenId> prompt, text_prompt;
  std::vector<TokenId> steps; // fed after each prompt, one a pass
  int64_t n_embd = 0, n_vocab = 0;
};

Fixture make_fixture() {
  Fixture f;
  auto model = Model::load(testing::small_language_model("batch-image-qwen2vl", "qwen2vl"));
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  f.model = std::move(model).value();
  f.n_embd = f.model->hparams().n_embd;
  f.n_vocab = f.model->hparams().n_vocab;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  f.rows.resize(static_cast<size_t>(kImage.n_tokens() * f.n_embd));
  for (float& v : f.rows)
    v = value(rng);
  std::uniform_int_distribution<TokenId> token(1, static_cast<TokenId>(f.n_vocab - 1));
  for (int64_t i = 0; i < kBefore + kImage.n_tokens() + kAfter; ++i)
    f.prompt.push_back(i >= kImage.begin && i < kImage.end() ? 0 : token(rng));
  for (int i = 0; i < 7; ++i)
    f.text_prompt.push_back(token(rng));
  for (int i = 0; i < kSteps; ++i)
    f.steps.push_back(token(rng));
  return f;
}

using Rows = std::vector<std::vector<float>>;

// Alone on a CpuSession: the text before the image, the image's rows, the text after and
// each step, with M-RoPE positions from the image on.
Rows alone(const Fixture& f) {
  auto session = CpuSession::create(*f.model, {128, 2, 256});
  EXPECT_TRUE(session.ok());
  const MatrixView table{TensorType::kF32, reinterpret_cast<const uint8_t*>(f.rows.data()),
                         kImage.n_tokens(), f.n_embd, static_cast<size_t>(f.n_embd) * 4};
  auto run = [&](int64_t begin, int64_t end, std::span<const TokenId> ids, bool image) {
    std::vector<int32_t> pos;
    for (int64_t s = begin; s < end; ++s) {
      const auto p = mrope_position(kImage, s);
      pos.insert(pos.end(), p.begin(), p.end());
    }
    auto logits = (*session)->decode(ids, DecodeExtras{image ? &table : nullptr, pos});
    EXPECT_TRUE(logits.ok()) << logits.status().to_string();
    return std::vector<float>(logits->begin(), logits->end());
  };
  const std::span<const TokenId> prompt(f.prompt);
  std::vector<TokenId> image_rows;
  for (int64_t r = 0; r < kImage.n_tokens(); ++r)
    image_rows.push_back(static_cast<TokenId>(r));
  run(0, kBefore, prompt.first(kBefore), false);
  run(kImage.begin, kImage.end(), image_rows, true);
  Rows out{run(kImage.end(), kImage.end() + kAfter, prompt.subspan(kImage.end()), false)};
  int64_t slot = static_cast<int64_t>(f.prompt.size());
  for (TokenId t : f.steps) {
    out.push_back(run(slot, slot + 1, std::span(&t, 1), false));
    ++slot;
  }
  return out;
}

BatchEntry image_entry(const Fixture& f, SeqId seq, TokenId token, int64_t slot, bool logits) {
  BatchEntry e{seq, token, logits};
  e.rope = mrope_position(kImage, slot);
  if (slot >= kImage.begin && slot < kImage.end())
    e.embedding = f.rows.data() + (slot - kImage.begin) * f.n_embd;
  return e;
}

TEST(BatchImage, ImageEntriesGetTheirLogitsAloneBitForBitNextToText) {
  const Fixture f = make_fixture();
  const Rows want_image = alone(f);
  BatchParams bp;
  bp.max_sequences = 2;
  bp.n_ctx = 128;
  bp.page_tokens = 4;
  bp.n_threads = 2;
  auto engine = BatchedCpuSession::create(*f.model, bp);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  BatchDecoder& e = **engine;
  auto img = e.open_sequence(), txt = e.open_sequence();
  ASSERT_TRUE(img.ok() && txt.ok());

  // The image prompt in chunks of 4 (cutting through the image), the text prompt in
  // chunks of 3, in the same passes; then the steps of both together.
  Rows got_image, got_text;
  const auto n_img = static_cast<int64_t>(f.prompt.size());
  const auto n_txt = static_cast<int64_t>(f.text_prompt.size());
  for (int64_t a = 0, b = 0; a < n_img || b < n_txt; a += 4, b += 3) {
    std::vector<BatchEntry> pass;
    for (int64_t i = a; i < std::min(a + 4, n_img); ++i)
      pass.push_back(image_entry(f, *img, f.prompt[static_cast<size_t>(i)], i, i + 1 == n_img));
    for (int64_t i = b; i < std::min(b + 3, n_txt); ++i)
      pass.push_back({*txt, f.text_prompt[static_cast<size_t>(i)], i + 1 == n_txt});
    auto out = e.decode(pass);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    int64_t row = 0;
    for (const BatchEntry& entry : pass)
      if (entry.logits) {
        auto l = out->row(row++);
        (entry.seq == *img ? got_image : got_text).emplace_back(l.begin(), l.end());
      }
  }
  for (int64_t s = 0; s < kSteps; ++s) {
    const TokenId t = f.steps[static_cast<size_t>(s)];
    const std::vector<BatchEntry> pass = {{*txt, t, true},
                                          image_entry(f, *img, t, n_img + s, true)};
    auto out = e.decode(pass);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    got_text.emplace_back(out->row(0).begin(), out->row(0).end());
    got_image.emplace_back(out->row(1).begin(), out->row(1).end());
  }
  EXPECT_EQ(got_image, want_image);

  // The text sequence as alone, with no positions given.
  auto session = CpuSession::create(*f.model, {128, 2, 256});
  ASSERT_TRUE(session.ok());
  Rows want_text;
  auto first = (*session)->decode(f.text_prompt);
  want_text.emplace_back(first->begin(), first->end());
  for (TokenId t : f.steps) {
    auto l = (*session)->decode(std::span(&t, 1));
    want_text.emplace_back(l->begin(), l->end());
  }
  EXPECT_EQ(got_text, want_text);
}

TEST(BatchImage, EnginesWithoutImageEntriesRefuseThem) {
  const Fixture f = make_fixture();
  PerSequenceDecoder engine(1, 16, f.n_vocab, [&]() -> Result<std::unique_ptr<Decoder>> {
    PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(*f.model, {128, 1, 256}));
    return std::unique_ptr<Decoder>(std::move(s));
  });
  auto seq = engine.open_sequence();
  ASSERT_TRUE(seq.ok());
  const std::vector<BatchEntry> pass = {image_entry(f, *seq, 0, kImage.begin, true)};
  auto out = engine.decode(pass);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(engine.sequence_length(*seq), 0) << "nothing was decoded";
}

} // namespace
} // namespace pshard
