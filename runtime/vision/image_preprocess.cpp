// Steps 1-3 of image.h. The arithmetic follows llama.cpp's float rounding (the scale
// and the sample positions in float, the cubic's coefficients rounded to float), so the
// same image gives the same 8-bit pixels and sizes as its multimodal tools.
#include "runtime/vision/image.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The cubic through (-1, pm), (0, p0), (1, p1), (2, p2), at t in [0, 1).
float cubic(float pm, float p0, float p1, float p2, float t) {
  const float d0 = pm - p0, d2 = p1 - p0, d3 = p2 - p0;
  const float a1 = static_cast<float>(-1.0 / 3 * d0 + d2 - 1.0 / 6 * d3);
  const float a2 = static_cast<float>(1.0 / 2 * d0 + 1.0 / 2 * d2);
  const float a3 = static_cast<float>(-1.0 / 6 * d0 - 1.0 / 2 * d2 + 1.0 / 6 * d3);
  return p0 + a1 * t + a2 * t * t + a3 * t * t * t;
}

// Hugging Face's smart_resize (Qwen2-VL's image processor; llama.cpp's
// calc_size_preserved_ratio): each side rounded to the nearest whole token (halves to
// even), then both scaled by one factor, down to at most max_image_tokens (sides floored)
// or up to at least min_image_tokens (sides ceiled).
ImageSize token_limited_size(ImageSize original, const ProjectorHParams& hp) {
  const auto m = static_cast<double>(hp.merged_patch());
  const double w = static_cast<double>(original.width), h = static_cast<double>(original.height);
  auto side = [m](double v) { return std::max(m, m * v); };
  double wb = side(std::nearbyint(w / m)), hb = side(std::nearbyint(h / m));
  const double most = static_cast<double>(hp.max_image_tokens) * m * m;
  const double least = static_cast<double>(std::max<int64_t>(1, hp.min_image_tokens)) * m * m;
  if (wb * hb > most) {
    const double beta = std::sqrt(w * h / most);
    wb = side(std::floor(w / beta / m));
    hb = side(std::floor(h / beta / m));
  } else if (wb * hb < least) {
    const double beta = std::sqrt(least / (w * h));
    wb = m * std::ceil(w * beta / m);
    hb = m * std::ceil(h * beta / m);
  }
  // A sliver (Hugging Face refuses sides more than 200:1) keeps one token across, which
  // the scale did not count: its long side gives up the excess.
  auto tokens = [m](double side_px) { return static_cast<int64_t>(side_px / m); };
  if (tokens(wb) * tokens(hb) > hp.max_image_tokens) {
    double& longer = wb >= hb ? wb : hb;
    const int64_t across = tokens(wb >= hb ? hb : wb);
    longer = m * static_cast<double>(std::max<int64_t>(1, hp.max_image_tokens / across));
  }
  return {static_cast<int64_t>(wb), static_cast<int64_t>(hb)};
}

} // namespace

ImageSize vision_input_size(ImageSize original, const ProjectorHParams& hp) {
  if (hp.max_image_tokens > 0)
    return token_limited_size(original, hp);
  const float cap = static_cast<float>(hp.image_size);
  const float w = static_cast<float>(original.width), h = static_cast<float>(original.height);
  const float scale = std::min(1.0f, std::min(cap / w, cap / h));
  const int64_t m = hp.merged_patch();
  // A sliver thinner than one token after scaling still gets one token row.
  return {std::max(m, round_up(static_cast<int64_t>(w * scale), m)),
          std::max(m, round_up(static_cast<int64_t>(h * scale), m))};
}

RgbImage resize_bicubic(const RgbImage& src, int64_t width, int64_t height) {
  RgbImage dst;
  dst.width = width;
  dst.height = height;
  dst.rgb.resize(static_cast<size_t>(width * height * 3));
  const int64_t nx = src.width, ny = src.height;
  const float tx = static_cast<float>(nx) / static_cast<float>(width);
  const float ty = static_cast<float>(ny) / static_cast<float>(height);
  auto px = [&](int64_t y, int64_t x, int c) {
    y = std::clamp<int64_t>(y, 0, ny - 1);
    x = std::clamp<int64_t>(x, 0, nx - 1);
    return static_cast<float>(src.rgb[static_cast<size_t>((y * nx + x) * 3 + c)]);
  };
  for (int64_t i = 0; i < height; ++i) {
    const auto y = static_cast<int64_t>(ty * static_cast<float>(i));
    const float dy = ty * static_cast<float>(i) - static_cast<float>(y);
    for (int64_t j = 0; j < width; ++j) {
      const auto x = static_cast<int64_t>(tx * static_cast<float>(j));
      const float dx = tx * static_cast<float>(j) - static_cast<float>(x);
      for (int c = 0; c < 3; ++c) {
        float col[4];
        for (int r = 0; r < 4; ++r) {
          const int64_t yy = y - 1 + r;
          col[r] = cubic(px(yy, x - 1, c), px(yy, x, c), px(yy, x + 1, c), px(yy, x + 2, c), dx);
        }
        const float v = cubic(col[0], col[1], col[2], col[3], dy);
        dst.rgb[static_cast<size_t>((i * width + j) * 3 + c)] =
            static_cast<uint8_t>(std::min(std::max(std::round(v), 0.0f), 255.0f));
      }
    }
  }
  return dst;
}

Result<VisionInput> preprocess_image(const RgbImage& img, const ProjectorHParams& hp) {
  if (img.width <= 0 || img.height <= 0 ||
      img.rgb.size() != static_cast<size_t>(img.width * img.height * 3))
    return invalid_argument("the image has no pixels, or its buffer does not hold " +
                            std::to_string(img.width) + " x " + std::to_string(img.height) +
                            " RGB pixels");
  const ImageSize size = vision_input_size({img.width, img.height}, hp);
  const RgbImage resized = resize_bicubic(img, size.width, size.height);
  VisionInput in;
  in.width = size.width;
  in.height = size.height;
  const size_t plane = static_cast<size_t>(size.width * size.height);
  in.chw.resize(3 * plane);
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < 3; ++c)
      in.chw[static_cast<size_t>(c) * plane + p] =
          (static_cast<float>(resized.rgb[p * 3 + static_cast<size_t>(c)]) / 255.0f - hp.mean[c]) /
          hp.std[c];
  return in;
}

} // namespace pshard
