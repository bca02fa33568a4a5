#include "runtime/capi/encoded_image_cache.h"

#include <string_view>

namespace pshard::capi {

uint64_t encoded_image_key(const RgbImage& rgb) {
  const std::string_view bytes(reinterpret_cast<const char*>(rgb.rgb.data()), rgb.rgb.size());
  uint64_t key = std::hash<std::string_view>{}(bytes);
  for (const int64_t side : {rgb.width, rgb.height})
    key = (key ^ static_cast<uint64_t>(side)) * 0x100000001b3ull;
  return key ? key : 1;
}

std::shared_ptr<const ImageEmbeddings> EncodedImageCache::find(uint64_t key) {
  std::lock_guard lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  recent_.splice(recent_.begin(), recent_, it->second);
  return it->second->image;
}

void EncodedImageCache::insert(uint64_t key, std::shared_ptr<const ImageEmbeddings> image) {
  const uint64_t bytes = (image->data.size() + image->deepstack.size()) * sizeof(float);
  std::lock_guard lock(mutex_);
  if (bytes > max_bytes_ || index_.count(key))
    return;
  recent_.push_front({key, std::move(image), bytes});
  index_[key] = recent_.begin();
  bytes_ += bytes;
  while (bytes_ > max_bytes_) {
    bytes_ -= recent_.back().bytes;
    index_.erase(recent_.back().key);
    recent_.pop_back();
  }
}

int64_t EncodedImageCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

int64_t EncodedImageCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

} // namespace pshard::capi
