// The CUDA kernels' block readers (block_formats.cuh, __host__ __device__) run on the
// host here, so they are checked on any machine with the toolkit, GPU or not: every
// type's value_at on random blocks and edge blocks gives dequantize_row's floats bit
// for bit (the device then computes the same, its float ops being IEEE too).
#include "runtime/backends/cuda/kernels/block_formats.cuh"
#include "runtime/kernels/quantize.h"

#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace pshard {
namespace {

template <TensorType T> void expect_host_reads_like_dequantize() {
  using B = cuda::kernels::BlockOf<T>;
  static_assert(B::kValues > 1, "block types only");
  ASSERT_EQ(static_cast<size_t>(B::kBytes), tensor_type_traits(T).block_bytes);
  ASSERT_EQ(B::kValues, tensor_type_traits(T).block_values);
  std::mt19937 rng(static_cast<uint32_t>(T));
  const int n_blocks = 64;
  std::vector<uint8_t> row(static_cast<size_t>(n_blocks) * B::kBytes);
  for (uint8_t& b : row)
    b = static_cast<uint8_t>(rng());
  // Fills of the last blocks: every code at its extreme.
  std::memset(row.data() + (n_blocks - 2) * B::kBytes, 0xff, 2 * B::kBytes);
  // Finite scales: clear the top exponent bit of every byte pair that could be one.
  for (size_t i = 1; i < row.size(); i += 2)
    row[i] &= 0xbf;
  const int64_t n = static_cast<int64_t>(n_blocks) * B::kValues;
  std::vector<float> want(n);
  dequantize_row(T, row.data(), want.data(), n);
  for (int64_t c = 0; c < n; ++c) {
    const float got = cuda::kernels::weight_at<T>(row.data(), c);
    ASSERT_EQ(std::memcmp(&got, &want[c], 4), 0)
        << tensor_type_name(T) << " value " << c << ": " << got << " vs " << want[c];
  }
}

TEST(CudaBlockFormats, EveryTypeReadsLikeTheHostDequantizer) {
  expect_host_reads_like_dequantize<TensorType::kQ8_0>();
  expect_host_reads_like_dequantize<TensorType::kQ4_0>();
  expect_host_reads_like_dequantize<TensorType::kQ4_1>();
  expect_host_reads_like_dequantize<TensorType::kQ5_0>();
  expect_host_reads_like_dequantize<TensorType::kQ5_1>();
  expect_host_reads_like_dequantize<TensorType::kIQ4_NL>();
  expect_host_reads_like_dequantize<TensorType::kQ2_K>();
  expect_host_reads_like_dequantize<TensorType::kQ3_K>();
  expect_host_reads_like_dequantize<TensorType::kQ4_K>();
  expect_host_reads_like_dequantize<TensorType::kQ5_K>();
  expect_host_reads_like_dequantize<TensorType::kQ6_K>();
  expect_host_reads_like_dequantize<TensorType::kIQ4_XS>();
  expect_host_reads_like_dequantize<TensorType::kMXFP4>();
}

TEST(CudaBlockFormats, DispatchKnowsEveryType) {
  size_t n = 0;
  const TensorType* types = supported_tensor_types(&n);
  for (size_t i = 0; i < n; ++i)
    EXPECT_TRUE(cuda::kernels::dispatch_type(types[i], [](auto) {})) << tensor_type_name(types[i]);
}

} // namespace
} // namespace pshard
