// Where an image goes in a prompt's text: llama.cpp's marker wrapped in the vision
// markers, Qwen2-VL's span with what is inside replaced, an unclosed start read as text,
// and every count of places and images that differ refused.
#include "runtime/vision/image_prompt_text.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

TEST(ImagePromptText, AMarkerIsWrappedInTheVisionMarkers) {
  auto t = split_image_prompt("Look: <__media__> what is it?", 1);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->before, "Look: <|vision_start|>");
  EXPECT_EQ(t->after, "<|vision_end|> what is it?");
}

TEST(ImagePromptText, ASpansInsideIsReplaced) {
  auto t = split_image_prompt("a<|vision_start|><|image_pad|><|vision_end|>b", 1);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->before, "a<|vision_start|>");
  EXPECT_EQ(t->after, "<|vision_end|>b");
}

TEST(ImagePromptText, CountsPlacesInOrderAndReadsAnUnclosedStartAsText) {
  EXPECT_EQ(count_image_places("no image"), 0);
  EXPECT_EQ(count_image_places("<|vision_start|> never closed"), 0);
  EXPECT_EQ(count_image_places("<__media__> <|vision_start|>x<|vision_end|> <__media__>"), 3);
  // A marker inside a span is part of what the span replaces.
  EXPECT_EQ(count_image_places("<|vision_start|><__media__><|vision_end|>"), 1);
  const ImagePromptText first = image_before("hi");
  EXPECT_EQ(first.before + "|" + first.after, "<|vision_start|>|<|vision_end|>hi");
}

TEST(ImagePromptText, PlacesAndImagesThatDifferAreRefused) {
  EXPECT_FALSE(split_image_prompt("<__media__><__media__>", 1).ok());
  EXPECT_FALSE(split_image_prompt("nothing", 1).ok());
  EXPECT_FALSE(split_image_prompt("<__media__>", 0).ok());
  auto two = split_image_prompt("<__media__><__media__>", 2);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("one image a prompt"), std::string::npos);
  auto none = split_image_prompt("just text", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->before, "just text");
}

} // namespace
} // namespace pshard
