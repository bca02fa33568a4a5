// Where images go in a prompt's text: llama.cpp's marker wrapped in the vision markers,
// Qwen2-VL's span with what is inside replaced, an unclosed start read as text, several
// images at their places in order, and every count of places and images that differ
// refused.
#include "runtime/vision/image_prompt_text.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

std::string joined(const ImagePromptText& t) {
  std::string s;
  for (size_t i = 0; i < t.pieces.size(); ++i)
    s += (i ? "|" : "") + t.pieces[i];
  return s;
}

TEST(ImagePromptText, AMarkerIsWrappedInTheVisionMarkers) {
  auto t = split_image_prompt("Look: <__media__> what is it?", 1);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->n_images(), 1);
  EXPECT_EQ(joined(*t), "Look: <|vision_start|>|<|vision_end|> what is it?");
}

TEST(ImagePromptText, ASpansInsideIsReplaced) {
  auto t = split_image_prompt("a<|vision_start|><|image_pad|><|vision_end|>b", 1);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(joined(*t), "a<|vision_start|>|<|vision_end|>b");
}

TEST(ImagePromptText, SeveralImagesTakeTheirPlacesInOrder) {
  // A marker, a span and a marker again, back to back and apart.
  auto t = split_image_prompt(
      "A <__media__> B <|vision_start|><|image_pad|><|vision_end|><__media__> C", 3);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->n_images(), 3);
  EXPECT_EQ(joined(*t), "A <|vision_start|>|<|vision_end|> B <|vision_start|>|<|vision_end|>"
                        "<|vision_start|>|<|vision_end|> C");
  const ImagePromptText before = images_before("hi", 2);
  EXPECT_EQ(joined(before), "<|vision_start|>|<|vision_end|><|vision_start|>|<|vision_end|>hi");
  EXPECT_EQ(joined(images_before("hi", 0)), "hi");
}

TEST(ImagePromptText, CountsPlacesInOrderAndReadsAnUnclosedStartAsText) {
  EXPECT_EQ(count_image_places("no image"), 0);
  EXPECT_EQ(count_image_places("<|vision_start|> never closed"), 0);
  EXPECT_EQ(count_image_places("<__media__> <|vision_start|>x<|vision_end|> <__media__>"), 3);
  // A marker inside a span is part of what the span replaces.
  EXPECT_EQ(count_image_places("<|vision_start|><__media__><|vision_end|>"), 1);
  EXPECT_EQ(joined(images_before("hi", 1)), "<|vision_start|>|<|vision_end|>hi");
}

TEST(ImagePromptText, PlacesAndImagesThatDifferAreRefused) {
  EXPECT_FALSE(split_image_prompt("<__media__><__media__>", 1).ok());
  EXPECT_FALSE(split_image_prompt("<__media__>", 2).ok());
  EXPECT_FALSE(split_image_prompt("nothing", 1).ok());
  auto zero = split_image_prompt("<__media__>", 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("names 1 image places but 0 images were given"),
            std::string::npos)
      << zero.status().message();
  auto none = split_image_prompt("just text", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(joined(*none), "just text");
}

} // namespace
} // namespace pshard
