// Decoding through stb_image (Debian libstb-dev, which ships it compiled as libstb).
#include "runtime/vision/image.h"

#include "runtime/core/file_bytes.h"

#if PSHARD_HAVE_STB
#include <stb_image.h>
#endif

namespace pshard {

Result<RgbImage> decode_image(std::span<const uint8_t> bytes) {
#if PSHARD_HAVE_STB
  if (bytes.empty())
    return invalid_argument("the image is empty (0 bytes)");
  int w = 0, h = 0, channels = 0;
  stbi_uc* pixels =
      stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &channels, 3);
  if (!pixels)
    return invalid_argument(std::string("the image cannot be decoded: ") + stbi_failure_reason() +
                            " (PNG, JPEG, BMP, GIF, TGA and PNM are read)");
  RgbImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(pixels, pixels + static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  stbi_image_free(pixels);
  return img;
#else
  (void)bytes;
  return unsupported("pshard was built without stb_image, so it cannot read images; install "
                     "libstb-dev (tools/install-deps.sh) and rebuild");
#endif
}

// A PNG or JPEG a vision encoder is given is megabytes; 1 GiB is no image anyone means.
constexpr uint64_t kMaxImageFileBytes = 1ull << 30;

Result<RgbImage> load_image(const std::string& path) {
  std::vector<uint8_t> bytes;
  PSHARD_RETURN_IF_ERROR(read_whole_file(path, kMaxImageFileBytes, "image file", &bytes));
  Result<RgbImage> img = decode_image(bytes);
  if (!img.ok())
    return Status(img.status().code(), "image '" + path + "': " + img.status().message());
  return img;
}

} // namespace pshard
