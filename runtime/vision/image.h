// Images for the vision encoder: decoding a file (PNG, JPEG, and whatever else
// stb_image reads: BMP, GIF's first frame, TGA, PNM) into 8-bit RGB, and the
// preprocessing llama.cpp's multimodal tools apply for Qwen-VL projectors:
//
//   1. size: scale = min(1, cap / width, cap / height) with cap = clip.vision.image_size
//      (the aspect ratio is kept, only a longer side is shrunk, never enlarged); each
//      side = trunc(side · scale) rounded up to a multiple of the merged patch
//      (patch_size · 2: 28 pixels, Qwen3-VL 32), so the image is a whole grid of image tokens;
//      — or, with image token limits (ProjectorHParams::max_image_tokens), the size
//      Hugging Face's smart_resize gives: sides rounded to whole tokens, scaled to at
//      most max and at least min tokens;
//   2. bicubic resize to that size: output pixel (i, j) samples the source at
//      (ty · i, tx · j), t = source / target side, no half-pixel shift; the 4x4
//      neighbourhood (edges clamped) is interpolated by the cubic through the four
//      samples at offsets -1, 0, 1, 2, first along x, then along y; rounded to 8 bits;
//   3. per channel (value / 255 - mean) / std, from clip.vision.image_mean / image_std.
//
//   PSHARD_ASSIGN_OR_RETURN(RgbImage img, load_image("photo.jpg"));
//   PSHARD_ASSIGN_OR_RETURN(VisionInput in, preprocess_image(img, projector.hparams()));
//   in.width;   // a multiple of 28, at most the cap rounded up
#pragma once

#include "runtime/core/status.h"
#include "runtime/vision/projector_hparams.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

struct RgbImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> rgb; // row-major, 3 bytes a pixel
};

// Errors name the file and stb_image's reason (not an image, truncated, unsupported).
Result<RgbImage> load_image(const std::string& path);
Result<RgbImage> decode_image(std::span<const uint8_t> bytes);

struct ImageSize {
  int64_t width = 0, height = 0;
};

// The size an image of `original` pixels is resized to (step 1).
ImageSize vision_input_size(ImageSize original, const ProjectorHParams& hp);

// Step 2 alone, for tests.
RgbImage resize_bicubic(const RgbImage& src, int64_t width, int64_t height);

// The encoder's input: channel-planar floats (3 x height x width), normalised.
struct VisionInput {
  int64_t width = 0, height = 0;
  std::vector<float> chw;
};

Result<VisionInput> preprocess_image(const RgbImage& img, const ProjectorHParams& hp);

} // namespace pshard
