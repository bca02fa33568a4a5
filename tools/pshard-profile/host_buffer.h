// Page-aligned host buffers for measurements, touched on creation so that page faults
// are paid before any clock starts (a first touch of 512 MiB costs more than reading it).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace pshard::profiling {

class HostBuffer {
public:
  HostBuffer() = default;
  explicit HostBuffer(size_t bytes) : bytes_(bytes) {
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded)));
    if (data_)
      std::memset(data_.get(), 0, rounded);
  }
  bool ok() const { return data_ != nullptr; }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return bytes_; }
  template <typename T> T* as() { return reinterpret_cast<T*>(data_.get()); }

private:
  static constexpr size_t kAlign = 4096;
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t bytes_ = 0;
};

} // namespace pshard::profiling
