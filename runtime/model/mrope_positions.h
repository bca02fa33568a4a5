// Multimodal rotary positions (Qwen2-VL's M-RoPE) of a sequence holding one image: what
// each cache slot's (t, h, w) rotary positions are, for the single-sequence image prompt
// (runtime/vision/image_prompt.h) and the batched engines' image entries alike.
//
//   text before the image   t = h = w = slot                       (plain NeoX RoPE)
//   image token (y, x)      t = begin, h = begin + y, w = begin + x
//   text after the image    t = h = w = slot - n + max(tokens_x, tokens_y)
//
//   ImageSpan img{.begin = 5, .tokens_x = 4, .tokens_y = 3};
//   mrope_position(img, 6);   // {5, 5, 6}: the image's token (y 0, x 1)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace pshard {

struct ImageSpan {
  int64_t begin = 0; // the slot of the image's first token
  int64_t tokens_x = 0, tokens_y = 0;
  int64_t n_tokens() const { return tokens_x * tokens_y; }
  int64_t end() const { return begin + n_tokens(); }
};

inline std::array<int32_t, 3> mrope_position(const ImageSpan& img, int64_t slot) {
  if (slot < img.begin) {
    const auto s = static_cast<int32_t>(slot);
    return {s, s, s};
  }
  if (slot >= img.end()) {
    const auto s =
        static_cast<int32_t>(slot - img.n_tokens() + std::max(img.tokens_x, img.tokens_y));
    return {s, s, s};
  }
  const int64_t row = slot - img.begin;
  return {static_cast<int32_t>(img.begin), static_cast<int32_t>(img.begin + row / img.tokens_x),
          static_cast<int32_t>(img.begin + row % img.tokens_x)};
}

} // namespace pshard
