// A zero-filled array whose memory the process holds only where it is written: calloc
// takes large blocks fresh from the kernel (already zero) without touching them, where
// std::vector's assign writes every byte up front. For buffers sized for the worst case —
// activations for a pass of the whole context, a server's KV page pool — of which a run
// often uses the start: resident memory follows what is used, and reads of the rest
// still see zeros.
//
//   ZeroedArray<float> a(n);   // throws std::bad_alloc like a vector when it cannot
//   a.data()[i] = 1.0f;
#pragma once

#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace pshard {

template <typename T> class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>, "calloc'd memory holds trivial values only");

public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n) : size_(n) {
    if (n == 0)
      return;
    data_.reset(static_cast<T*>(std::calloc(n, sizeof(T))));
    if (!data_)
      throw std::bad_alloc();
  }
  ZeroedArray(ZeroedArray&& o) noexcept
      : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }

private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

} // namespace pshard
