// What the image-entry tests of both batched engines share (BatchEntry's embedding rows,
// DeepStack rows and M-RoPE positions): a qwen2vl model, or a qwen3vl one (interleaved
// M-RoPE, DeepStack rows after its first 2 layers), an image prompt and a text prompt, each
// sequence's logits alone on a CpuSession, and the passes that prefill both in chunks
// cutting through the image, then decode steps of both together.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/model/model.h"
#include "runtime/model/mrope_positions.h"
#include "tests/runtime/vision/vision_test_util.h"

#include <gtest/gtest.h>
#include <random>

namespace pshard::batch_image {


constexpr int64_t kBefore = 5, kAfter = 4, kSteps = 3;
inline const ImageSpan kImage{kBefore, 3, 2};

// The language models the tests run: name, arch, DeepStack layers.
struct Arch {
  const char* name;
  const char* arch;
  int64_t n_deepstack;
};
inline const Arch kQwen2Vl{"batch-image-qwen2vl", "qwen2vl", 0};
inline const Arch kQwen3Vl{"batch-image-qwen3vl", "qwen3vl", 2};

inline std::string arch_model(const Arch& a) {
  return testing::small_language_model(a.name, a.arch, a.n_deepstack);
}

struct Fixture {
  std::unique_ptr<Model> model;
  std::vector<float> rows;      // the image's embedding rows
  std::vector<float> deepstack; // its DeepStack rows (ImageEmbeddings' layout), or none
  int64_t n_deepstack = 0;
  std::vector<TokenId> prompt, text_prompt;
  std::vector<TokenId> steps; // fed after each prompt, one a pass
  int64_t n_embd = 0, n_vocab = 0;
};

inline Fixture make_fixture(const Arch& arch = kQwen2Vl) {
  Fixture f;
  auto model = Model::load(arch_model(arch));
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  f.model = std::move(model).value();
  f.n_embd = f.model->hparams().n_embd;
  f.n_vocab = f.model->hparams().n_vocab;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  f.rows.resize(static_cast<size_t>(kImage.n_tokens() * f.n_embd));
  for (float& v : f.rows)
    v = value(rng);
  f.n_deepstack = arch.n_deepstack;
  f.deepstack.resize(static_cast<size_t>(f.n_deepstack) * f.rows.size());
  for (float& v : f.deepstack)
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

inline DeepstackTable deepstack_table(const Fixture& f) {
  return {f.deepstack.data(), f.n_deepstack, kImage.n_tokens() * f.n_embd};
}

// Alone on a CpuSession: the text before the image, the image's rows, the text after and
// each step, with M-RoPE positions from the image on (`deepstack` false: the image's
// DeepStack rows zeroed).
inline Rows alone(const Fixture& f, bool deepstack = true) {
  const std::vector<float> zeros(f.deepstack.size(), 0.0f);
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
    DeepstackTable ds = image ? deepstack_table(f) : DeepstackTable{};
    if (!deepstack)
      ds.data = zeros.data();
    auto logits = (*session)->decode(ids, DecodeExtras{image ? &table : nullptr, pos, ds});
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

inline BatchEntry image_entry(const Fixture& f, SeqId seq, TokenId token, int64_t slot, bool logits) {
  BatchEntry e{seq, token, logits};
  e.rope = mrope_position(kImage, slot);
  if (slot >= kImage.begin && slot < kImage.end()) {
    e.embedding = f.rows.data() + (slot - kImage.begin) * f.n_embd;
    if (f.n_deepstack > 0) {
      e.deepstack = f.deepstack.data() + (slot - kImage.begin) * f.n_embd;
      e.deepstack_stride = kImage.n_tokens() * f.n_embd;
      e.deepstack_layers = f.n_deepstack;
    }
  }
  return e;
}

// The text sequence alone, with no positions given.
inline Rows text_alone(const Fixture& f) {
  auto session = CpuSession::create(*f.model, {128, 2, 256});
  EXPECT_TRUE(session.ok());
  Rows want_text;
  auto first = (*session)->decode(f.text_prompt);
  want_text.emplace_back(first->begin(), first->end());
  for (TokenId t : f.steps) {
    auto l = (*session)->decode(std::span(&t, 1));
    want_text.emplace_back(l->begin(), l->end());
  }
  return want_text;
}

// Both sequences through `e`: the image prompt in chunks of 4 (cutting through the image),
// the text prompt in chunks of 3, in the same passes; then the steps of both together.
// Returns false (after a gtest failure) when a pass fails.
inline bool run_both(BatchDecoder& e, const Fixture& f, Rows& got_image, Rows& got_text) {
  auto img = e.open_sequence(), txt = e.open_sequence();
  EXPECT_TRUE(img.ok() && txt.ok());
  if (!img.ok() || !txt.ok())
    return false;
  const auto n_img = static_cast<int64_t>(f.prompt.size());
  const auto n_txt = static_cast<int64_t>(f.text_prompt.size());
  // Up to 4 image and 3 text tokens a pass, fewer when the engine takes fewer (a forced
  // tier): the image's tokens first, the rest of the pass for the text's.
  const int64_t m = std::min<int64_t>(e.max_batch_tokens(), 7);
  const int64_t image_chunk = std::max<int64_t>(1, m * 4 / 7);
  auto run = [&](const std::vector<BatchEntry>& pass) {
    auto out = e.decode(pass);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    if (!out.ok())
      return false;
    int64_t row = 0;
    for (const BatchEntry& entry : pass)
      if (entry.logits) {
        auto l = out->row(row++);
        (entry.seq == *img ? got_image : got_text).emplace_back(l.begin(), l.end());
      }
    return true;
  };
  for (int64_t a = 0, b = 0; a < n_img || b < n_txt;) {
    std::vector<BatchEntry> pass;
    const int64_t take_image = std::min(image_chunk, n_img - a);
    const int64_t take_text = std::min(m - take_image, n_txt - b);
    for (int64_t i = a; i < a + take_image; ++i)
      pass.push_back(image_entry(f, *img, f.prompt[static_cast<size_t>(i)], i, i + 1 == n_img));
    for (int64_t i = b; i < b + take_text; ++i)
      pass.push_back({*txt, f.text_prompt[static_cast<size_t>(i)], i + 1 == n_txt});
    a += take_image;
    b += take_text;
    if (!run(pass))
      return false;
  }
  for (int64_t s = 0; s < kSteps; ++s) { // both together, or one a pass
    const TokenId t = f.steps[static_cast<size_t>(s)];
    const std::vector<BatchEntry> both = {{*txt, t, true}, image_entry(f, *img, t, n_img + s, true)};
    if (m >= 2 ? !run(both) : !run({both[0]}) || !run({both[1]}))
      return false;
  }
  e.close_sequence(*img);
  e.close_sequence(*txt);
  return true;
}

} // namespace pshard::batch_image
