// Helpers shared by the kernel tests: deterministic random data and rows of any type.
#pragma once

#include "runtime/kernels/quantize.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <random>
#include <vector>

namespace pshard::test {

inline std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &f : v)
    f = dist(rng);
  return v;
}

inline size_t row_bytes(TensorType type, int64_t n) { return tensor_bytes(type, n).value(); }

// `rows` rows of `cols` random values quantized to `type`, each row `stride` bytes apart.
inline std::vector<uint8_t> random_matrix(TensorType type, int64_t rows, int64_t cols,
                                          size_t stride, uint32_t seed) {
  std::vector<uint8_t> bytes(stride * static_cast<size_t>(rows), 0xab);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row = random_floats(cols, seed + static_cast<uint32_t>(r));
    if (!quantize_row(type, row.data(), bytes.data() + r * stride, cols).ok())
      return {};
  }
  return bytes;
}

} // namespace pshard::test
