// M-RoPE positions of sequences holding images: hand-worked values for two images, and,
// over random layouts, agreement with Qwen2-VL's own numbering (get_rope_index), written
// here as it is there — a counter that walks the sequence, each text token one past the
// largest position so far, each image's grid from that start — rather than as the
// closed form the runtime uses.
#include "runtime/model/mrope_positions.h"

#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace pshard {
namespace {

using Pos = std::array<int32_t, 3>;

TEST(MropePositions, TwoImagesHandWorked) {
  // Slots 0-1 text, 2-7 an image of 3 x 2 tokens, 8 text, 9-12 an image of 2 x 2, 13 text.
  const std::vector<ImageSpan> images{{2, 3, 2}, {9, 2, 2}};
  EXPECT_EQ(mrope_position(images, 1), (Pos{1, 1, 1}));
  EXPECT_EQ(mrope_position(images, 2), (Pos{2, 2, 2}));
  EXPECT_EQ(mrope_position(images, 7), (Pos{2, 3, 4})); // row 1, column 2
  // After the first image: 2 + max(3, 2) = 5, though 8 slots have passed.
  EXPECT_EQ(mrope_position(images, 8), (Pos{5, 5, 5}));
  EXPECT_EQ(mrope_position(images, 9), (Pos{6, 6, 6}));
  EXPECT_EQ(mrope_position(images, 12), (Pos{6, 7, 7}));
  EXPECT_EQ(mrope_position(images, 13), (Pos{8, 8, 8}));
  EXPECT_EQ(image_at(images, 1), -1);
  EXPECT_EQ(image_at(images, 7), 0);
  EXPECT_EQ(image_at(images, 8), -1);
  EXPECT_EQ(image_at(images, 12), 1);
  EXPECT_EQ(image_at(images, 13), -1);
  // One image alone: the one-image overload is the list of one.
  for (int64_t s = 0; s < 14; ++s)
    EXPECT_EQ(mrope_position(images[0], s), mrope_position(std::span(images).first(1), s));
}

// get_rope_index's walk over a sequence of `n` slots.
std::vector<Pos> walked(const std::vector<ImageSpan>& images, int64_t n) {
  std::vector<Pos> out;
  int64_t next = 0; // one past the largest position so far
  size_t i = 0;
  for (int64_t s = 0; s < n;) {
    if (i < images.size() && s == images[i].begin) {
      const ImageSpan& img = images[i++];
      for (int64_t y = 0; y < img.tokens_y; ++y)
        for (int64_t x = 0; x < img.tokens_x; ++x)
          out.push_back({static_cast<int32_t>(next), static_cast<int32_t>(next + y),
                         static_cast<int32_t>(next + x)});
      next += std::max(img.tokens_x, img.tokens_y);
      s = img.end();
      continue;
    }
    out.push_back(
        {static_cast<int32_t>(next), static_cast<int32_t>(next), static_cast<int32_t>(next)});
    ++next;
    ++s;
  }
  return out;
}

TEST(MropePositions, AgreeWithQwen2VlsWalkOverRandomLayouts) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> gap(0, 5), side(1, 6), count(0, 4);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ImageSpan> images;
    int64_t at = gap(rng);
    for (int64_t k = count(rng); k > 0; --k) {
      images.push_back({at, side(rng), side(rng)});
      at = images.back().end() + gap(rng); // images may touch
    }
    const int64_t n = at + gap(rng);
    ASSERT_TRUE(image_spans_fit(images, n));
    const std::vector<Pos> want = walked(images, n);
    ASSERT_EQ(static_cast<int64_t>(want.size()), n);
    for (int64_t s = 0; s < n; ++s)
      ASSERT_EQ(mrope_position(images, s), want[static_cast<size_t>(s)])
          << "trial " << trial << ", slot " << s;
  }
}

TEST(MropePositions, SpansOutOfOrderOverlappingOrPastThePromptDoNotFit) {
  EXPECT_TRUE(image_spans_fit({}, 0));
  EXPECT_TRUE(image_spans_fit(std::vector<ImageSpan>{{0, 2, 2}, {4, 1, 1}}, 5));
  EXPECT_FALSE(image_spans_fit(std::vector<ImageSpan>{{0, 2, 2}, {3, 1, 1}}, 5)); // overlap
  EXPECT_FALSE(image_spans_fit(std::vector<ImageSpan>{{4, 1, 1}, {0, 2, 2}}, 5)); // order
  EXPECT_FALSE(image_spans_fit(std::vector<ImageSpan>{{2, 2, 2}}, 5));            // past the end
  EXPECT_FALSE(image_spans_fit(std::vector<ImageSpan>{{0, 0, 2}}, 5));            // no tokens
  EXPECT_FALSE(image_spans_fit(std::vector<ImageSpan>{{-1, 1, 1}}, 5));
}

} // namespace
} // namespace pshard
