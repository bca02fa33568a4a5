// Multimodal rotary positions (Qwen2-VL's M-RoPE) of a sequence holding images: what each
// cache slot's (t, h, w) rotary positions are, for the single-sequence image prompt
// (runtime/vision/image_prompt.h) and the batched engines' image entries alike.
//
//   text before the first image   t = h = w = slot                 (plain NeoX RoPE)
//   image token (y, x)            t = p, h = p + y, w = p + x      (p: the image's start)
//   text after an image           continues from p + max(tokens_x, tokens_y)
//
// so each image counts max(tokens_x, tokens_y) positions, not its tokens_x · tokens_y
// slots, and what follows it — text or the next image — starts one past its largest
// coordinate: Qwen2-VL's get_rope_index, and llama.cpp's mtmd, number several images so.
// KV-cache slots and causal order stay sequential.
//
//   ImageSpan img{.begin = 5, .tokens_x = 4, .tokens_y = 3};
//   mrope_position(img, 6);    // {5, 5, 6}: the image's token (y 0, x 1)
//   mrope_position(img, 17);   // {9, 9, 9}: the text after it (12 slots, 4 positions)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

namespace pshard {

struct ImageSpan {
  int64_t begin = 0; // the slot of the image's first token
  int64_t tokens_x = 0, tokens_y = 0;
  int64_t n_tokens() const { return tokens_x * tokens_y; }
  int64_t end() const { return begin + n_tokens(); }
  // Slots the image takes beyond the rotary positions it counts.
  int64_t dropped() const { return n_tokens() - std::max(tokens_x, tokens_y); }
};

// `images` in slot order, none overlapping (image_spans_fit).
inline std::array<int32_t, 3> mrope_position(std::span<const ImageSpan> images, int64_t slot) {
  int64_t dropped = 0; // by the images before `slot`
  for (const ImageSpan& img : images) {
    if (slot < img.begin)
      break;
    if (slot < img.end()) {
      const int64_t p = img.begin - dropped, row = slot - img.begin;
      return {static_cast<int32_t>(p), static_cast<int32_t>(p + row / img.tokens_x),
              static_cast<int32_t>(p + row % img.tokens_x)};
    }
    dropped += img.dropped();
  }
  const auto s = static_cast<int32_t>(slot - dropped);
  return {s, s, s};
}

inline std::array<int32_t, 3> mrope_position(const ImageSpan& img, int64_t slot) {
  return mrope_position(std::span<const ImageSpan>(&img, 1), slot);
}

// The index of the image holding `slot`, or -1 (text).
inline int64_t image_at(std::span<const ImageSpan> images, int64_t slot) {
  for (size_t i = 0; i < images.size() && images[i].begin <= slot; ++i)
    if (slot < images[i].end())
      return static_cast<int64_t>(i);
  return -1;
}

// Whether the images have tokens, come in slot order without overlapping, and all end by
// slot `n_slots` (a prompt of that many tokens holds them).
inline bool image_spans_fit(std::span<const ImageSpan> images, int64_t n_slots) {
  int64_t at = 0;
  for (const ImageSpan& img : images) {
    if (img.tokens_x <= 0 || img.tokens_y <= 0 || img.begin < at)
      return false;
    at = img.end();
  }
  return at <= n_slots;
}

} // namespace pshard
