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

#include <cstdint>
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
    if (n > (SIZE_MAX - kAlign) / sizeof(T))
      throw std::bad_alloc();
    raw_.reset(std::calloc(n * sizeof(T) + kAlign, 1));
    if (!raw_)
      throw std::bad_alloc();
    const auto at = (reinterpret_cast<uintptr_t>(raw_.get()) + kAlign - 1) & ~(kAlign - 1);
    data_ = reinterpret_cast<T*>(at);
  }
  ZeroedArray(ZeroedArray&& o) noexcept
      : raw_(std::move(o.raw_)), data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    raw_ = std::move(o.raw_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }

  // Where data() starts: on a cache line. calloc's large blocks begin 16 bytes past a page,
  // so a KV cache's rows straddled a line more than they had to — one head's 256-byte F16
  // slice touched five lines, not four — and decode attention paid for the extra line on
  // every row.
  static constexpr uintptr_t kAlign = 64;

private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> raw_;
  T* data_ = nullptr;
  size_t size_ = 0;
};

} // namespace pshard
