// A batch's recently encoded images (pshard_batch_add), by what they were made from, so
// that a conversation sending its earlier turns' images again each turn does not encode
// them again: the same pixels through the same projector give the same rows. The key also
// names the image's rows in the prefix cache (runtime/serve/request.h, PromptImage::key),
// so that their KV pages are shared too. Least recently used images leave past max_bytes.
// Thread-safe: requests are added from any thread.
//
//   const uint64_t key = encoded_image_key(img.rgb);
//   if (auto hit = cache.find(key)) ... else cache.insert(key, encode(...));
#pragma once

#include "runtime/vision/image.h"
#include "runtime/vision/vision_encoder.h"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace pshard::capi {

// What a batch or a context keeps: about twenty 7B-VL images of 1000 tokens.
inline constexpr uint64_t kEncodedImageCacheBytes = 256ull << 20;

// A 64-bit hash of the pixels and their size; never 0 (PromptImage's "unnamed").
uint64_t encoded_image_key(const RgbImage& rgb);

class EncodedImageCache {
public:
  explicit EncodedImageCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The image's rows, or null (counted as a hit or a miss).
  std::shared_ptr<const ImageEmbeddings> find(uint64_t key);
  void insert(uint64_t key, std::shared_ptr<const ImageEmbeddings> image);

  int64_t hits() const;
  int64_t misses() const;

private:
  struct Entry {
    uint64_t key;
    std::shared_ptr<const ImageEmbeddings> image;
    uint64_t bytes;
  };
  mutable std::mutex mutex_;
  uint64_t max_bytes_, bytes_ = 0;
  std::list<Entry> recent_; // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> index_;
  int64_t hits_ = 0, misses_ = 0;
};

} // namespace pshard::capi
