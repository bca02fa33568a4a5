// dot_row and matmul: accuracy against float64, and the determinism contract —
// bit-identical across thread counts, and a token's result independent of how many
// tokens share the call (the decoded multi-token path equals the single-row path).
#include "kernel_test_util.h"
#include "runtime/kernels/matmul.h"
#include "runtime/kernels/quantize.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

namespace pshard {
namespace {

constexpr TensorType kAllTypes[] = {TensorType::kF32, TensorType::kF16, TensorType::kBF16,
                                    TensorType::kQ8_0, TensorType::kQ4_0};

bool is_quantized(TensorType t) { return t == TensorType::kQ8_0 || t == TensorType::kQ4_0; }

// Float error bound of the kernels' reduction, relative to sum |w * x|: each of the
// 8 lanes adds n/8 products, then a 3-level tree; quantized types sum a 32-value
// block that way, scale it, and add the n/32 block sums one after another.
double error_bound(TensorType type, int64_t n, double abs_sum) {
  const double steps = is_quantized(type) ? (32.0 / 8 + 3 + 1) + n / 32.0 : n / 8.0 + 3;
  return (steps + 2) * 0x1p-24 * abs_sum + 1e-30;
}

struct Reference {
  double value = 0, abs_sum = 0;
};

// float64 dot of the dequantized row (dequantization is exact, checked in quantize_test).
Reference reference_dot(TensorType type, const uint8_t *row, const float *x, int64_t n) {
  std::vector<float> w(n);
  dequantize_row(type, row, w.data(), n);
  Reference r;
  for (int64_t i = 0; i < n; ++i) {
    r.value += double(w[i]) * x[i];
    r.abs_sum += std::fabs(double(w[i]) * x[i]);
  }
  return r;
}

TEST(DotRow, MatchesFloat64WithinStatedBound) {
  for (TensorType type : kAllTypes) {
    const std::vector<int64_t> sizes = is_quantized(type) ? std::vector<int64_t>{32, 64, 96, 4160}
                                                          : std::vector<int64_t>{1, 7, 33, 1001};
    for (int64_t n : sizes) {
      const size_t bytes = test::row_bytes(type, n);
      const std::vector<uint8_t> row = test::random_matrix(type, 1, n, bytes, 5);
      ASSERT_FALSE(row.empty());
      const std::vector<float> x = test::random_floats(n, 99);
      const Reference ref = reference_dot(type, row.data(), x.data(), n);
      const float got = dot_row(type, row.data(), x.data(), n);
      EXPECT_LE(std::fabs(got - ref.value), error_bound(type, n, ref.abs_sum))
          << tensor_type_name(type) << " n=" << n << " got " << got << " want " << ref.value;
    }
  }
}

struct Case {
  TensorType type;
  int64_t rows, cols, n_tokens;
  size_t padding; // extra bytes between rows (keeping float rows aligned, as GGUF does)
};

std::vector<float> run_matmul(const Case &c, const std::vector<uint8_t> &w, size_t stride,
                              const std::vector<float> &x, int threads) {
  ThreadPool pool(threads);
  std::vector<float> y(c.rows * c.n_tokens, -1.0f);
  matmul({c.type, w.data(), c.rows, c.cols, stride}, x.data(), c.n_tokens, y.data(), pool);
  return y;
}

TEST(Matmul, AccurateDeterministicAndIndependentOfTokenCount) {
  std::vector<Case> cases;
  for (TensorType type : kAllTypes)
    for (int64_t n_tokens : {1, 3, 17}) {
      cases.push_back({type, 37, 160, n_tokens, 0});
      cases.push_back({type, 5, 4160, n_tokens, 8});
      if (!is_quantized(type))
        cases.push_back({type, 7, 33, n_tokens, 4});
    }
  for (const Case &c : cases) {
    SCOPED_TRACE(testing::Message() << tensor_type_name(c.type) << " rows=" << c.rows
                                    << " cols=" << c.cols << " tokens=" << c.n_tokens);
    const size_t stride = test::row_bytes(c.type, c.cols) + c.padding;
    const std::vector<uint8_t> w = test::random_matrix(c.type, c.rows, c.cols, stride, 17);
    ASSERT_FALSE(w.empty());
    const std::vector<float> x = test::random_floats(c.cols * c.n_tokens, 23);

    const std::vector<float> y1 = run_matmul(c, w, stride, x, 1);
    for (int threads : {2, 3}) {
      const std::vector<float> yn = run_matmul(c, w, stride, x, threads);
      ASSERT_EQ(std::memcmp(y1.data(), yn.data(), y1.size() * sizeof(float)), 0)
          << threads << " threads differ from 1";
    }
    for (int64_t t = 0; t < c.n_tokens; ++t) {
      for (int64_t r = 0; r < c.rows; ++r) {
        const uint8_t *row = w.data() + r * stride;
        const float *xt = x.data() + t * c.cols;
        const float got = y1[t * c.rows + r];
        // Bit-identical to the single-row kernel, whatever path matmul took.
        ASSERT_EQ(got, dot_row(c.type, row, xt, c.cols)) << "t=" << t << " r=" << r;
        const Reference ref = reference_dot(c.type, row, xt, c.cols);
        ASSERT_LE(std::fabs(got - ref.value), error_bound(c.type, c.cols, ref.abs_sum))
            << "t=" << t << " r=" << r;
      }
    }
  }
}

TEST(Matmul, EmptyShapesWriteNothing) {
  ThreadPool pool(2);
  float y[4] = {1, 2, 3, 4};
  const float x[4] = {};
  matmul({TensorType::kF32, nullptr, 0, 4, 16}, x, 1, y, pool);
  matmul({TensorType::kF32, nullptr, 1, 4, 16}, x, 0, y, pool);
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[3], 4);
}

} // namespace
} // namespace pshard
