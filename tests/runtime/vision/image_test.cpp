// Image decoding and preprocessing properties, and the encoder's guarantees that do not
// need a reference: the same embeddings on any thread count, refused inputs.
#include "runtime/vision/image.h"
#include "runtime/vision/vision_encoder.h"
#include "tests/runtime/vision/vision_test_util.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <tuple>

namespace pshard {
namespace {

ProjectorHParams cap_224() {
  ProjectorHParams hp;
  hp.image_size = 224;
  hp.patch_size = 14;
  return hp;
}

TEST(VisionInputSize, KeepsTheAspectCapsTheLongerSideAndMakesWholeTokens) {
  const ProjectorHParams hp = cap_224();
  for (int64_t w : {1, 13, 28, 100, 224, 225, 640, 1920})
    for (int64_t h : {1, 27, 56, 224, 480, 1080}) {
      const ImageSize s = vision_input_size({w, h}, hp);
      EXPECT_EQ(s.width % 28, 0) << w << "x" << h;
      EXPECT_EQ(s.height % 28, 0) << w << "x" << h;
      // Each side is the scaled side (the longer one shrunk to the cap, never enlarged)
      // rounded up to whole tokens: within one token above it, at least one token.
      const double scale = std::min(1.0, 224.0 / static_cast<double>(std::max(w, h)));
      for (auto [got, side] : {std::pair{s.width, w}, std::pair{s.height, h}}) {
        const double scaled = static_cast<double>(side) * scale;
        EXPECT_GE(static_cast<double>(got), scaled - 1.0) << w << "x" << h;
        EXPECT_LT(static_cast<double>(got), std::max(scaled + 28.0, 29.0)) << w << "x" << h;
      }
    }
}

// Image token limits (Hugging Face's smart_resize): sides rounded to whole tokens, then
// scaled to the limits; worked out by hand for 32-pixel tokens (Qwen3-VL).
TEST(VisionInputSize, TokenLimitsKeepTheSizeWithinThem) {
  ProjectorHParams hp = cap_224();
  hp.patch_size = 16;
  ASSERT_TRUE(set_image_tokens(hp, 16, 256).ok());
  auto size = [&](int64_t w, int64_t h) {
    const ImageSize s = vision_input_size({w, h}, hp);
    return std::pair{s.width, s.height};
  };
  // 1920 x 1080 rounds to 60 x 34 tokens (2040, over 256): scaled by sqrt(1920·1080 /
  // (256·1024)) = 2.8125, floored: 21 x 12 tokens.
  EXPECT_EQ(size(1920, 1080), std::pair(int64_t{672}, int64_t{384}));
  // Within the limits: each side to the nearest token, halves to even (400: 12.5 -> 12,
  // 48: 1.5 -> 2, 80: 2.5 -> 2), past the cap of 224 on the longer side.
  EXPECT_EQ(size(400, 300), std::pair(int64_t{384}, int64_t{288}));
  EXPECT_EQ(size(48 * 4, 80 * 4), std::pair(int64_t{192}, int64_t{320}));
  EXPECT_EQ(size(160, 176), std::pair(int64_t{160}, int64_t{192})); // 5.5 -> 6
  // 40 x 30 rounds to one token (under 16): enlarged by sqrt(16·1024 / 1200), ceiled:
  // 5 x 4 tokens.
  EXPECT_EQ(size(40, 30), std::pair(int64_t{160}, int64_t{128}));
  // Slivers too (one token across, the long side cut to the limit).
  EXPECT_EQ(size(16384, 1), std::pair(int64_t{256 * 32}, int64_t{32}));
  for (int64_t w : {1, 17, 500, 3000, 16384})
    for (int64_t h : {1, 33, 700, 9000}) {
      const auto [sw, sh] = size(w, h);
      EXPECT_EQ(sw % 32, 0);
      EXPECT_EQ(sh % 32, 0);
      EXPECT_LE((sw / 32) * (sh / 32), 256) << w << "x" << h;
      EXPECT_GE(sw, 32);
      EXPECT_GE(sh, 32);
    }
  // Without limits the cap applies again.
  ASSERT_TRUE(set_image_tokens(hp, 0, 0).ok());
  EXPECT_EQ(size(1920, 1080), std::pair(int64_t{224}, int64_t{128}));
}

TEST(VisionInputSize, BadTokenLimitsAreRefusedNamingTheFix) {
  ProjectorHParams hp = cap_224();
  for (auto [lo, hi, says] : {std::tuple{int64_t{8}, int64_t{0}, "--image-max-tokens"},
                              std::tuple{int64_t{64}, int64_t{32}, "above the maximum"},
                              std::tuple{int64_t{0}, int64_t{70000}, "between 0 and 65536"},
                              std::tuple{int64_t{-1}, int64_t{8}, "between 0 and 65536"}}) {
    const Status st = set_image_tokens(hp, lo, hi);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << lo << " " << hi;
    EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
    EXPECT_EQ(hp.max_image_tokens, 0) << "a refused limit leaves the old ones";
  }
}

TEST(ResizeBicubic, SameSizeIsTheIdentityAndFlatStaysFlat) {
  RgbImage img;
  img.width = 7;
  img.height = 5;
  for (int64_t i = 0; i < 7 * 5 * 3; ++i)
    img.rgb.push_back(static_cast<uint8_t>((i * 37) % 256));
  EXPECT_EQ(resize_bicubic(img, 7, 5).rgb, img.rgb);
  RgbImage flat = img;
  std::fill(flat.rgb.begin(), flat.rgb.end(), uint8_t{91});
  for (const RgbImage& r : {resize_bicubic(flat, 19, 3), resize_bicubic(flat, 2, 11)})
    for (uint8_t v : r.rgb)
      ASSERT_EQ(v, 91);
}

TEST(DecodeImage, RefusesWhatIsNotAnImage) {
  const std::vector<uint8_t> junk = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'};
  auto r = decode_image(junk);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("image"), std::string::npos) << r.status().message();
  auto missing = load_image(::testing::TempDir() + "/no-such-image.png");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  const std::string path = ::testing::TempDir() + "/junk.png";
  std::ofstream(path) << "junk";
  auto bad = load_image(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();
}

TEST(EncodeImage, SameEmbeddingsOnAnyThreadCountAndRefusesPartialTokens) {
  auto proj = Projector::open(
      testing::small_projector("image_test_mmproj", ProjectorType::kQwen25Vl, 2, 24));
  ASSERT_TRUE(proj.ok()) << proj.status().to_string();
  RgbImage img;
  img.width = 90;
  img.height = 60;
  for (int64_t i = 0; i < 90 * 60 * 3; ++i)
    img.rgb.push_back(static_cast<uint8_t>((i * 7919) % 251));
  auto in = preprocess_image(img, (*proj)->hparams());
  ASSERT_TRUE(in.ok());
  ThreadPool one(1), two(2);
  auto a = encode_image(**proj, *in, one);
  auto b = encode_image(**proj, *in, two);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->tokens_x * 28, in->width);
  EXPECT_EQ(a->tokens_y * 28, in->height);
  EXPECT_EQ(a->n_embd, 24);
  EXPECT_EQ(a->data, b->data);
  for (float v : a->data)
    ASSERT_TRUE(std::isfinite(v));
  VisionInput partial = *in;
  partial.width -= 14;
  partial.chw.resize(static_cast<size_t>(3 * partial.width * partial.height));
  auto refused = encode_image(**proj, partial, one);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("28"), std::string::npos);
}

// The token order: every 2x2 block exactly once, its four patches together; with
// window attention the windows are contiguous runs whose blocks lie in one square of
// window_tokens() blocks a side.
TEST(VisionPass, BlocksAreAPermutationAndWindowsAreContiguousSquares) {
  ProjectorHParams hp;
  hp.patch_size = 14;
  hp.n_embd = 8;
  hp.n_head = 2;
  hp.n_ff = 8;
  hp.projection_dim = 8;
  ThreadPool pool(1);
  for (int64_t wa : {0, 2})
    for (auto [w, h] : {std::pair{28 * 5, 28 * 3}, std::pair{28 * 2, 28 * 7}}) {
      hp.n_wa_pattern = wa;
      hp.window_size = 56; // 2 x 2 blocks
      VisionInput in;
      in.width = w;
      in.height = h;
      const ProjectorWeights none; // no weights: only the widths of the buffers depend on them
      VisionPass p(hp, none, pool, in);
      const int64_t bx = w / 28, by = h / 28;
      std::vector<int32_t> sorted = p.block_order;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t i = 0; i < bx * by; ++i)
        ASSERT_EQ(sorted[static_cast<size_t>(i)], i) << "block " << i;
      for (size_t t = 0; t < p.pos_y.size(); ++t) {
        const int32_t b = p.block_order[t / 4];
        EXPECT_EQ(p.pos_y[t] / 2, b / bx);
        EXPECT_EQ(p.pos_x[t] / 2, b % bx);
      }
      ASSERT_EQ(p.windows.front(), 0);
      ASSERT_EQ(p.windows.back(), p.n_tokens());
      if (wa == 0) {
        EXPECT_EQ(p.windows.size(), 2u);
      }
      for (size_t r = 0; r + 1 < p.windows.size(); r += 2) {
        if (r > 0) {
          EXPECT_EQ(p.windows[r], p.windows[r - 1]); // contiguous
        }
        const int32_t first = p.block_order[static_cast<size_t>(p.windows[r] / 4)];
        for (int64_t t = p.windows[r]; t < p.windows[r + 1] && wa > 0; t += 4) {
          const int32_t b = p.block_order[static_cast<size_t>(t / 4)];
          EXPECT_EQ(b / bx / 2, first / bx / 2);
          EXPECT_EQ(b % bx / 2, first % bx / 2);
        }
      }
    }
}

} // namespace
} // namespace pshard
