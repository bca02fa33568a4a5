// matmul: activations packed once per call (quantized types), then weight rows
// split across the pool in contiguous ranges, each thread streaming its own rows
// through the active ISA path's register-tiled kernel (kernel_set.h).
#include "runtime/kernels/matmul.h"

#include "runtime/kernels/kernel_set.h"

#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace pshard {
namespace {

// Below this many multiply-adds a thread's share is not worth a hand-off.
constexpr int64_t kMinWorkPerThread = 32 * 1024;
// Rows are handed out in groups of 16: 64 bytes of each token's output, so two
// threads never write the same cache line.
constexpr int64_t kRowGroup = 16;
// Addresses this far apart share an L1 set (32 KiB, 8 ways, 64-byte lines).
constexpr size_t kCacheSetPeriod = 4096;

void fill_nan(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = std::numeric_limits<float>::quiet_NaN();
}

// A growable 64-byte-aligned scratch buffer (the kernels use aligned loads on it).
class AlignedScratch {
public:
  uint8_t* get(size_t bytes) {
    if (bytes > size_) {
      storage_ = std::make_unique<uint8_t[]>(bytes + 64);
      size_ = bytes;
    }
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage_.get());
    return storage_.get() + ((64 - p % 64) % 64);
  }

private:
  std::unique_ptr<uint8_t[]> storage_;
  size_t size_ = 0;
};

} // namespace

float dot_row(TensorType type, const void* row, const float* x, int64_t n) {
  const kernels::TypeKernels* k = kernels::type_kernels(kernels::kernel_set(), type);
  if (k == nullptr) // a type pshard does not run; loading rejects these earlier
    return std::numeric_limits<float>::quiet_NaN();
  const MatrixView w{type, static_cast<const uint8_t*>(row), 1, n, 0};
  const size_t packed = k->packed_bytes(n);
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  AlignedScratch scratch;
  if (packed > 0) {
    uint8_t* buf = scratch.get(packed);
    k->pack(x, n, buf);
    act = buf;
  }
  float y = 0.0f;
  k->gemm(w, 0, 1, act, packed > 0 ? packed : static_cast<size_t>(n) * sizeof(float), 1, &y, 1);
  return y;
}

void matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool) {
  if (w.rows <= 0 || n_tokens <= 0)
    return;
  const kernels::TypeKernels* k = kernels::type_kernels(kernels::kernel_set(), w.type);
  if (k == nullptr) {
    fill_nan(y, w.rows * n_tokens);
    return;
  }
  const int64_t rows = w.rows, cols = w.cols;
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  size_t stride = static_cast<size_t>(cols) * sizeof(float);

  // Quantized weights: quantize each token's activations once, for all rows.
  if (const size_t packed = k->packed_bytes(cols); packed > 0) {
    thread_local AlignedScratch scratch;
    uint8_t* buf = scratch.get(packed * static_cast<size_t>(n_tokens));
    auto pack = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t)
        k->pack(x + t * cols, cols, buf + t * packed);
    };
    if (n_tokens == 1)
      pack(0, 1);
    else
      pool.parallel_for(n_tokens, pack);
    act = buf;
    stride = packed;
  } else if (n_tokens > 1 && stride % kCacheSetPeriod == 0) {
    // Float activations whose rows lie a multiple of 4 KiB apart all map to the
    // same L1 sets, so a register tile's token rows evict each other: copy them to
    // a stride one cache line longer (same values, so the same results).
    thread_local AlignedScratch scratch;
    const size_t padded = stride + 64;
    uint8_t* buf = scratch.get(padded * static_cast<size_t>(n_tokens));
    pool.parallel_for(n_tokens, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t)
        std::memcpy(buf + t * padded, x + t * cols, stride);
    });
    act = buf;
    stride = padded;
  }

  const int64_t groups = (rows + kRowGroup - 1) / kRowGroup;
  const int64_t work_per_group = kRowGroup * (cols > 0 ? cols : 1) * n_tokens;
  pool.parallel_for(
      groups,
      [&](int64_t begin, int64_t end) {
        const int64_t r1 = end * kRowGroup < rows ? end * kRowGroup : rows;
        k->gemm(w, begin * kRowGroup, r1, act, stride, n_tokens, y, rows);
      },
      kMinWorkPerThread / work_per_group + 1);
}

void matmul_strided(const MatrixView& w, const float* x, int64_t x_stride, int64_t n_tokens,
                    float* y, int64_t y_stride) {
  if (w.rows <= 0 || n_tokens <= 0)
    return;
  const kernels::TypeKernels* k = kernels::type_kernels(kernels::kernel_set(), w.type);
  if (k == nullptr) {
    for (int64_t t = 0; t < n_tokens; ++t)
      fill_nan(y + t * y_stride, w.rows);
    return;
  }
  const int64_t cols = w.cols;
  const size_t packed = k->packed_bytes(cols);
  const size_t stride = packed > 0 ? packed : static_cast<size_t>(cols) * sizeof(float);
  thread_local AlignedScratch scratch;
  uint8_t* buf = scratch.get(stride * static_cast<size_t>(n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (packed > 0)
      k->pack(x + t * x_stride, cols, buf + t * stride);
    else
      std::memcpy(buf + t * stride, x + t * x_stride, stride);
  }
  k->gemm(w, 0, w.rows, buf, stride, n_tokens, y, y_stride);
}

} // namespace pshard
