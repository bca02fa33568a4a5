// matmul on every ISA path this CPU has (paths it lacks are skipped, saying so):
// every type x odd shapes (1..17 and 33 tokens, odd row counts, odd block counts, row
// tails, padded rows) against float64 references within stated bounds, and the
// determinism contract — bit-identical across thread counts, and a token's result
// independent of how many tokens share the call (prefill tiles == decode tiles).
#include "block_reference.h"
#include "isa_test_fixture.h"
#include "kernel_test_util.h"
#include "runtime/kernels/convert.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/kernels/matmul.h"
#include "runtime/kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

namespace pshard {
namespace {

using kernels::Isa;

std::vector<TensorType> all_types() {
  std::vector<TensorType> types = {TensorType::kF32, TensorType::kF16, TensorType::kBF16};
  for (TensorType t : test::ref_quantized_types())
    types.push_back(t);
  return types;
}

bool is_quantized(TensorType t) { return tensor_type_traits(t).block_values > 1; }
bool is_super_block(TensorType t) { return tensor_type_traits(t).block_values == 256; }
// Values per activation block: 32 for the legacy types (q8), 256 for the K-quants (q8k).
int64_t act_block(TensorType t) { return is_super_block(t) ? 256 : 32; }

// The activation formats' definition (act_quant.h), restated independently.
void quantize_activations(const float* x, int64_t n, int64_t block, std::vector<float>* d,
                          std::vector<int>* q) {
  for (int64_t b = 0; b < n / block; ++b) {
    float amax = 0;
    for (int64_t j = 0; j < block; ++j)
      amax = std::fmax(amax, std::fabs(x[b * block + j]));
    const float scale = amax / 127.0f, inv = scale != 0 ? 1.0f / scale : 0.0f;
    d->push_back(scale);
    for (int64_t j = 0; j < block; ++j)
      q->push_back(static_cast<int>(std::roundf(x[b * block + j] * inv)));
  }
}

struct Reference {
  double value = 0, abs_sum = 0;
  int64_t terms = 0; // sequential additions a kernel may make, for the rounding bound
};

// The float64 values of a quantized row (block_reference.h).
std::vector<test::RefValue> reference_row(TensorType type, const uint8_t* row, int64_t n) {
  const auto& t = tensor_type_traits(type);
  std::vector<test::RefValue> w;
  for (int64_t b = 0; b < n / t.block_values; ++b) {
    const std::vector<test::RefValue> block = test::ref_block(type, row + b * t.block_bytes);
    w.insert(w.end(), block.begin(), block.end());
  }
  return w;
}

// float64 value of what the kernels compute. Float types: dot(w, x). Quantized
// types: the exact weights times the 8-bit activations, block by activation block:
// sum_b d_x[b] * sum_j w_j * q_j (the integer products are exact in the kernels,
// only the scaling rounds).
Reference reference_dot(TensorType type, const uint8_t* row, const float* x, int64_t n) {
  Reference r;
  if (!is_quantized(type)) {
    std::vector<float> w(n);
    dequantize_row(type, row, w.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      r.value += double(w[i]) * x[i];
      r.abs_sum += std::fabs(double(w[i]) * x[i]);
    }
    r.terms = n;
    return r;
  }
  const std::vector<test::RefValue> w = reference_row(type, row, n);
  const int64_t block = act_block(type);
  std::vector<float> dx;
  std::vector<int> qx;
  quantize_activations(x, n, block, &dx, &qx);
  for (int64_t b = 0; b < n / block; ++b) {
    double sum = 0, abs_sum = 0;
    for (int64_t j = b * block; j < (b + 1) * block; ++j) {
      sum += w[j].value() * qx[j];
      abs_sum += (std::fabs(w[j].a) + std::fabs(w[j].b)) * std::abs(qx[j]);
    }
    r.value += double(dx[b]) * sum;
    r.abs_sum += std::fabs(double(dx[b])) * abs_sum;
  }
  // Per block a kernel rounds the scale products, the integer lanes' conversion
  // (K-quant lanes may pass 2^24) and the additions of the scaled code and min
  // parts: count three sequential roundings per block.
  r.terms = 3 * (n / block);
  return r;
}

// Every path adds at most `terms` products per lane one after another, then
// reduces at most 16 lanes in a 4-level tree; each product is rounded at most
// twice (scale products of the quantized types).
double error_bound(const Reference& r) { return (r.terms + 8) * 0x1p-24 * r.abs_sum + 1e-30; }

struct Case {
  TensorType type;
  int64_t rows, cols, n_tokens;
  size_t padding; // extra bytes between rows (keeping float rows aligned, as GGUF does)
};

std::vector<Case> odd_cases() {
  std::vector<Case> cases;
  for (TensorType type : all_types()) {
    // Row lengths in blocks of the type: 32 for legacy types, 256 for K-quants.
    const int64_t unit = is_super_block(type) ? 256 : 32;
    for (int64_t n_tokens = 1; n_tokens <= 17; ++n_tokens)
      cases.push_back({type, 37, 5 * unit, n_tokens, 0}); // 5 blocks: a lone last block
    for (int64_t n_tokens : {1, 4, 7})
      cases.push_back({type, 5, is_super_block(type) ? 17 * 256 : 4160, n_tokens, 8});
    cases.push_back({type, 1, unit, 3, 0});
    cases.push_back({type, 18, 3 * unit, 9, 4});
    // Prefill's blocking: 70 rows are two 32-row panels and a partial one; 33 tokens
    // end in partial token tiles; F32 rows of 1024 values lie 4 KiB apart, which
    // matmul copies to a padded stride first (several tokens only).
    for (int64_t n_tokens : {5, 13, 33})
      cases.push_back({type, 70, 1024, n_tokens, 0});
    if (!is_quantized(type))
      for (int64_t n_tokens : {1, 3, 17}) {
        cases.push_back({type, 7, 33, n_tokens, 4}); // row tails below one vector
        cases.push_back({type, 3, 1001, n_tokens, 0});
        cases.push_back({type, 9, 7, n_tokens, 4}); // f16/bf16 rows 2- not 4-byte aligned
      }
  }
  return cases;
}

std::vector<float> run_matmul(const Case& c, const std::vector<uint8_t>& w, size_t stride,
                              const float* x, int64_t n_tokens, int threads) {
  ThreadPool pool(threads);
  std::vector<float> y(c.rows * n_tokens, -1.0f);
  matmul({c.type, w.data(), c.rows, c.cols, stride}, x, n_tokens, y.data(), pool);
  return y;
}

class MatmulOnIsa : public test::OnIsa {};

TEST_P(MatmulOnIsa, AccurateDeterministicAndIndependentOfTokenCount) {
  for (const Case& c : odd_cases()) {
    SCOPED_TRACE(testing::Message() << tensor_type_name(c.type) << " rows=" << c.rows << " cols="
                                    << c.cols << " tokens=" << c.n_tokens);
    const size_t stride = test::row_bytes(c.type, c.cols) + c.padding;
    const std::vector<uint8_t> w = test::random_matrix(c.type, c.rows, c.cols, stride, 17);
    ASSERT_FALSE(w.empty());
    const std::vector<float> x = test::random_floats(c.cols * c.n_tokens, 23);

    const std::vector<float> y1 = run_matmul(c, w, stride, x.data(), c.n_tokens, 1);
    for (int threads : {2, 3}) {
      const std::vector<float> yn = run_matmul(c, w, stride, x.data(), c.n_tokens, threads);
      ASSERT_EQ(std::memcmp(y1.data(), yn.data(), y1.size() * sizeof(float)), 0)
          << threads << " threads differ from 1";
    }
    for (int64_t t = 0; t < c.n_tokens; ++t) {
      const float* xt = x.data() + t * c.cols;
      const std::vector<float> alone = run_matmul(c, w, stride, xt, 1, 2);
      for (int64_t r = 0; r < c.rows; ++r) {
        const float got = y1[t * c.rows + r];
        ASSERT_EQ(got, alone[r]) << "t=" << t << " r=" << r << ": differs from a 1-token call";
        const Reference ref = reference_dot(c.type, w.data() + r * stride, xt, c.cols);
        ASSERT_LE(std::fabs(got - ref.value), error_bound(ref))
            << "t=" << t << " r=" << r << " got " << got << " want " << ref.value;
      }
    }
  }
}

// Weights from random bytes (every code and scale-code pattern, moderate finite
// scales) and from constant fills (all codes at their extremes), so the SIMD
// unpacking sees what a quantizer may never write: against the reference, and a
// token's result the same alone and in a tile.
TEST_P(MatmulOnIsa, RandomBlockBytesMatchTheReference) {
  std::mt19937 rng(5);
  for (TensorType type : test::ref_quantized_types()) {
    SCOPED_TRACE(tensor_type_name(type));
    const auto& traits = tensor_type_traits(type);
    const int64_t rows = 9, cols = 3 * (traits.block_values == 256 ? 256 : 64), n_tokens = 6;
    const size_t stride = test::row_bytes(type, cols);
    std::vector<uint8_t> w(stride * rows);
    for (uint8_t& b : w)
      b = static_cast<uint8_t>(rng());
    for (int64_t r = 7; r < rows; ++r) // two rows of constant bytes
      std::fill(w.begin() + r * stride, w.begin() + (r + 1) * stride, r == 7 ? 0xff : 0x00);
    for (size_t block = 0; block < w.size(); block += traits.block_bytes)
      for (size_t off : test::ref_half_fields(type)) { // |scale| in [2^-9, 2^3), either sign
        const uint16_t h = static_cast<uint16_t>((rng() & 0x83ff) | (6 + rng() % 12) << 10);
        std::memcpy(&w[block + off], &h, 2);
      }
    for (size_t block = 0; block < w.size(); block += traits.block_bytes)
      for (size_t off : test::ref_e8m0_fields(type)) // scale 2^(e - 128) in [2^-9, 2^2]
        w[block + off] = static_cast<uint8_t>(119 + rng() % 12);
    const std::vector<float> x = test::random_floats(cols * n_tokens, 6);
    const Case c{type, rows, cols, n_tokens, 0};
    const std::vector<float> y = run_matmul(c, w, stride, x.data(), n_tokens, 2);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const std::vector<float> alone = run_matmul(c, w, stride, x.data() + t * cols, 1, 1);
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(y[t * rows + r], alone[r]) << "t=" << t << " r=" << r;
        const Reference ref = reference_dot(type, w.data() + r * stride, x.data() + t * cols, cols);
        ASSERT_LE(std::fabs(y[t * rows + r] - ref.value), error_bound(ref))
            << "t=" << t << " r=" << r << " got " << y[t * rows + r] << " want " << ref.value;
      }
    }
  }
}

// dot_row is matmul for one row and one token.
TEST_P(MatmulOnIsa, DotRowEqualsMatmul) {
  const Case c{TensorType::kQ4_0, 3, 512, 1, 0};
  for (TensorType type : all_types()) {
    Case tc = c;
    tc.type = type;
    const size_t stride = test::row_bytes(type, c.cols);
    const std::vector<uint8_t> w = test::random_matrix(type, c.rows, c.cols, stride, 3);
    const std::vector<float> x = test::random_floats(c.cols, 4);
    const std::vector<float> y = run_matmul(tc, w, stride, x.data(), 1, 1);
    for (int64_t r = 0; r < c.rows; ++r)
      EXPECT_EQ(y[r], dot_row(type, w.data() + r * stride, x.data(), c.cols))
          << tensor_type_name(type);
  }
}

// matmul_strided (DeepSeek's per-head products) is matmul bit for bit, reading and writing
// at its strides and nothing between them.
TEST_P(MatmulOnIsa, StridedEqualsMatmul) {
  for (TensorType type : all_types()) {
    const int64_t unit = is_super_block(type) ? 256 : 32;
    const Case c{type, 20, 4 * unit, 5, 0};
    SCOPED_TRACE(tensor_type_name(type));
    const size_t stride = test::row_bytes(type, c.cols);
    const std::vector<uint8_t> w = test::random_matrix(type, c.rows, c.cols, stride, 9);
    const std::vector<float> x = test::random_floats(c.cols * c.n_tokens, 10);
    const std::vector<float> want = run_matmul(c, w, stride, x.data(), c.n_tokens, 2);
    // Each token's input and output inside wider rows, as one head's slice of all heads'.
    const int64_t x_stride = c.cols * 3 + 5, y_stride = c.rows * 2 + 3;
    std::vector<float> xs(static_cast<size_t>(x_stride * c.n_tokens), 7.0f);
    for (int64_t t = 0; t < c.n_tokens; ++t)
      std::copy_n(x.data() + t * c.cols, c.cols, xs.data() + t * x_stride + c.cols);
    std::vector<float> ys(static_cast<size_t>(y_stride * c.n_tokens), -1.0f);
    matmul_strided({c.type, w.data(), c.rows, c.cols, stride}, xs.data() + c.cols, x_stride,
                   c.n_tokens, ys.data() + 1, y_stride);
    for (int64_t t = 0; t < c.n_tokens; ++t)
      for (int64_t i = 0; i < y_stride; ++i) {
        const float got = ys[static_cast<size_t>(t * y_stride + i)];
        if (i >= 1 && i < 1 + c.rows)
          ASSERT_EQ(got, want[static_cast<size_t>(t * c.rows + i - 1)]) << "t=" << t << " i=" << i;
        else
          ASSERT_EQ(got, -1.0f) << "t=" << t << " i=" << i << " was written";
      }
  }
}

// The activations of quantized matmuls are rounded to 8 bits per activation block
// (32 values, or 256 for the K-quants): the result is within sum |w| * d_x / 2 of
// the exact float product.
TEST_P(MatmulOnIsa, QuantizedActivationErrorIsBounded) {
  for (TensorType type : test::ref_quantized_types()) {
    SCOPED_TRACE(tensor_type_name(type));
    const int64_t n = 4096, block = act_block(type);
    const std::vector<uint8_t> row = test::random_matrix(type, 1, n, test::row_bytes(type, n), 8);
    const std::vector<float> x = test::random_floats(n, 9);
    std::vector<float> w(n);
    dequantize_row(type, row.data(), w.data(), n);
    double exact = 0, bound = 0, abs_sum = 0;
    for (int64_t b = 0; b < n / block; ++b) {
      double amax = 0, wsum = 0;
      for (int64_t j = b * block; j < (b + 1) * block; ++j) {
        exact += double(w[j]) * x[j];
        abs_sum += std::fabs(double(w[j]) * x[j]);
        amax = std::fmax(amax, std::fabs(x[j]));
        wsum += std::fabs(w[j]);
      }
      bound += wsum * amax / 127 / 2;
    }
    const float got = dot_row(type, row.data(), x.data(), n);
    EXPECT_LE(std::fabs(got - exact), bound * 1.001) << tensor_type_name(type);
    EXPECT_LT(bound, 0.02 * abs_sum) << "8-bit activations should cost under 2% of sum |w * x|";
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, MatmulOnIsa,
                         testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx2Vnni, Isa::kAvx512),
                         test::isa_param_name);

TEST(Matmul, EmptyShapesWriteNothing) {
  ThreadPool pool(2);
  float y[4] = {1, 2, 3, 4};
  const float x[4] = {};
  matmul({TensorType::kF32, nullptr, 0, 4, 16}, x, 1, y, pool);
  matmul({TensorType::kF32, nullptr, 1, 4, 16}, x, 0, y, pool);
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[3], 4);
}

TEST(CpuIsa, ParsesNamesAndRefusesUnsupportedPaths) {
  Isa isa;
  EXPECT_TRUE(kernels::parse_isa("AVX2", &isa));
  EXPECT_EQ(isa, Isa::kAvx2);
  EXPECT_TRUE(kernels::parse_isa("avx2vnni", &isa));
  EXPECT_EQ(isa, Isa::kAvx2Vnni);
  EXPECT_FALSE(kernels::parse_isa("sse9", &isa));
  EXPECT_TRUE(kernels::isa_supported(Isa::kScalar));
  EXPECT_TRUE(kernels::force_isa(Isa::kScalar));
  EXPECT_EQ(kernels::active_isa(), Isa::kScalar);
  EXPECT_TRUE(kernels::force_isa(kernels::detected_isa()));
  for (Isa path : {Isa::kAvx2, Isa::kAvx2Vnni, Isa::kAvx512}) {
    EXPECT_EQ(kernels::force_isa(path), kernels::isa_supported(path)) << kernels::isa_name(path);
    EXPECT_EQ(kernels::active_isa(), kernels::isa_supported(path) ? path : kernels::detected_isa());
    kernels::force_isa(kernels::detected_isa());
    EXPECT_GE(kernels::detected_isa(), kernels::isa_supported(path) ? path : Isa::kScalar)
        << "the detected path is the most preferred supported one";
  }
}

// AVX2-VNNI runs the legacy blocks' int8 sums as one vpdpbusd where AVX2 needs two
// instructions, and the K-quants' scaled pair sums as one vpdpwssd where AVX2 needs an
// add too; the int32 sums are exact either way, so every type gives AVX2's bits, in
// decode (1 token) and prefill tiles alike.
TEST(CpuIsa, Avx2VnniGivesAvx2sBits) {
  if (!kernels::isa_supported(Isa::kAvx2Vnni))
    GTEST_SKIP() << "this CPU lacks AVX-VNNI";
  ThreadPool pool(2);
  for (TensorType type : test::ref_quantized_types())
    for (int64_t n_tokens : {1, 5, 16}) {
      SCOPED_TRACE(std::string(tensor_type_name(type)) + " tokens=" + std::to_string(n_tokens));
      const int64_t rows = 37, cols = 512;
      const std::vector<uint8_t> w =
          test::random_matrix(type, rows, cols, test::row_bytes(type, cols), 21);
      const std::vector<float> x = test::random_floats(n_tokens * cols, 22);
      const MatrixView m{type, w.data(), rows, cols, test::row_bytes(type, cols)};
      std::vector<float> avx2(rows * n_tokens), vnni(rows * n_tokens, -1.0f);
      ASSERT_TRUE(kernels::force_isa(Isa::kAvx2));
      matmul(m, x.data(), n_tokens, avx2.data(), pool);
      ASSERT_TRUE(kernels::force_isa(Isa::kAvx2Vnni));
      matmul(m, x.data(), n_tokens, vnni.data(), pool);
      kernels::force_isa(kernels::detected_isa());
      EXPECT_EQ(0, std::memcmp(avx2.data(), vnni.data(), avx2.size() * sizeof(float)));
    }
}

} // namespace
} // namespace pshard
