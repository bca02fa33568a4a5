// quantize_row / dequantize_row: bit-exact block layouts, ggml's rounding rules,
// round-trip error bounds, and dequantization against a float64 reading of the bytes.
#include "block_reference.h"
#include "kernel_test_util.h"
#include "runtime/kernels/convert.h"
#include "runtime/kernels/quantize.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>

namespace pshard {
namespace {

constexpr TensorType kFloatTypes[] = {TensorType::kF32, TensorType::kF16, TensorType::kBF16};
constexpr TensorType kQuantTypes[] = {TensorType::kQ8_0, TensorType::kQ4_0};

uint16_t read_u16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The value of element i of a quantized row, read from the layout in tensor_type.h.
double reference_value(TensorType type, const uint8_t *row, int64_t i) {
  const int64_t b = i / 32, j = i % 32;
  if (type == TensorType::kQ8_0) {
    const uint8_t *block = row + b * 34;
    return double(fp16_to_fp32(read_u16(block))) * static_cast<int8_t>(block[2 + j]);
  }
  const uint8_t *block = row + b * 18;
  const int nib = j < 16 ? (block[2 + j] & 15) : (block[2 + j - 16] >> 4);
  return double(fp16_to_fp32(read_u16(block))) * (nib - 8);
}

TEST(Quantize, Q8_0KnownFloatsGiveKnownBytes) {
  // amax 127 makes d = 1 exactly, so q = roundf(x): halves round away from zero.
  float x[32] = {127, -127, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 0.49f, -3.2f};
  uint8_t block[34];
  ASSERT_TRUE(quantize_row(TensorType::kQ8_0, x, block, 32).ok());
  const uint8_t expected[11] = {0x00, 0x3c, 0x7f, 0x81, 0x01, 0xff, 0x02, 0x03, 0xfd, 0x00, 0xfd};
  EXPECT_EQ(std::memcmp(block, expected, sizeof expected), 0);
  for (int j = 9; j < 32; ++j)
    EXPECT_EQ(block[2 + j], 0) << j;
}

TEST(Quantize, Q4_0KnownFloatsGiveKnownBytes) {
  // max = -8 (largest magnitude, sign kept, first of the tie with +8) so d = 1;
  // q = min(15, trunc(x + 8.5)); +8 clamps to 15.
  float x[32] = {};
  x[0] = -8;
  x[1] = 8;
  x[2] = 7;
  x[3] = 0.5f;
  x[4] = -0.5f;
  x[5] = 0.49f;
  x[6] = -3.7f;
  x[16] = 1;
  x[17] = -1;
  uint8_t block[18];
  ASSERT_TRUE(quantize_row(TensorType::kQ4_0, x, block, 32).ok());
  EXPECT_EQ(read_u16(block), 0x3c00);
  const uint8_t q_lo[16] = {0, 15, 15, 9, 8, 8, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  const uint8_t q_hi[16] = {9, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  for (int j = 0; j < 16; ++j)
    EXPECT_EQ(block[2 + j], q_lo[j] | q_hi[j] << 4) << j;
}

TEST(Quantize, Q4_0ScaleKeepsTheSignOfTheFirstLargestValue) {
  float x[32] = {4, -4, 1};
  uint8_t block[18];
  ASSERT_TRUE(quantize_row(TensorType::kQ4_0, x, block, 32).ok());
  EXPECT_EQ(read_u16(block), 0xb800); // d = 4 / -8 = -0.5
  EXPECT_EQ(block[2] & 15, 0);        // 4 / -0.5 + 8 = 0
  EXPECT_EQ(block[3] & 15, 15);       // -4 -> 16, clamped
  EXPECT_EQ(block[4] & 15, 6);        // 1 -> -2 + 8.5 = 6.5 -> 6
}

TEST(Quantize, ZeroBlockHasZeroScale) {
  float x[32] = {};
  uint8_t q8[34], q4[18];
  ASSERT_TRUE(quantize_row(TensorType::kQ8_0, x, q8, 32).ok());
  ASSERT_TRUE(quantize_row(TensorType::kQ4_0, x, q4, 32).ok());
  for (uint8_t b : q8)
    EXPECT_EQ(b, 0);
  EXPECT_EQ(read_u16(q4), 0x8000); // d = 0 / -8 = -0, as ggml's reference stores it
  for (int j = 2; j < 18; ++j)
    EXPECT_EQ(q4[j], 0x88);
}

TEST(Dequantize, HandBuiltBlocksGiveExactValues) {
  uint8_t q4[18] = {0x00, 0x38}; // d = 0.5
  for (int j = 0; j < 16; ++j)
    q4[2 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  float out[32];
  dequantize_row(TensorType::kQ4_0, q4, out, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (j - 8) * 0.5f) << j;
    EXPECT_EQ(out[j + 16], (7 - j) * 0.5f) << j;
  }
  uint8_t q8[34] = {0x00, 0xb4}; // d = -0.25
  for (int j = 0; j < 32; ++j)
    q8[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j * 8 - 128));
  dequantize_row(TensorType::kQ8_0, q8, out, 32);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(out[j], (j * 8 - 128) * -0.25f) << j;
}

// Random bytes (any quants, any finite scale) decode to exactly d * q.
TEST(Dequantize, RandomBlocksMatchFloat64Reading) {
  std::mt19937 rng(3);
  for (TensorType type : kQuantTypes) {
    for (int64_t n : {32, 64, 96, 4160}) {
      std::vector<uint8_t> bytes(test::row_bytes(type, n));
      for (uint8_t &b : bytes)
        b = static_cast<uint8_t>(rng());
      const size_t block = type == TensorType::kQ8_0 ? 34 : 18;
      for (size_t off = 0; off < bytes.size(); off += block) // finite scales
        bytes[off + 1] &= 0xbf;                              // top exponent bit clear: |d| < 2
      std::vector<float> out(n);
      dequantize_row(type, bytes.data(), out.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(double(out[i]), reference_value(type, bytes.data(), i))
            << tensor_type_name(type) << " n=" << n << " i=" << i;
    }
  }
}

// Round trip: |x - x'| <= d/2 + |q| * (fp16 error of d); Q4_0's one clamped level
// (the opposite extreme) can be off by a whole step d.
TEST(Quantize, QuantizedRoundTripWithinHalfAStep) {
  for (TensorType type : kQuantTypes) {
    for (int64_t n : {32, 64, 96, 4160}) {
      const std::vector<float> x = test::random_floats(n, static_cast<uint32_t>(n), 3.0f);
      std::vector<uint8_t> q(test::row_bytes(type, n));
      ASSERT_TRUE(quantize_row(type, x.data(), q.data(), n).ok());
      std::vector<float> back(n);
      dequantize_row(type, q.data(), back.data(), n);
      for (int64_t b = 0; b < n / 32; ++b) {
        double amax = 0;
        for (int j = 0; j < 32; ++j)
          amax = std::max(amax, std::fabs(double(x[b * 32 + j])));
        const double step = type == TensorType::kQ8_0 ? amax / 127 : amax / 8;
        const double levels = type == TensorType::kQ8_0 ? 127 : 8;
        const double bound =
            step * (type == TensorType::kQ8_0 ? 0.5 : 1.0) + levels * step * 0x1p-11 + 1e-6 * amax;
        for (int j = 0; j < 32; ++j) {
          const int64_t i = b * 32 + j;
          ASSERT_LE(std::fabs(double(back[i]) - x[i]), bound)
              << tensor_type_name(type) << " n=" << n << " i=" << i;
        }
      }
    }
  }
}

// Float types: the round trip is exactly the type's own rounding of each value.
TEST(Quantize, FloatTypesRoundTripAtOddSizes) {
  for (TensorType type : kFloatTypes) {
    for (int64_t n : {1, 7, 33, 1001}) {
      const std::vector<float> x = test::random_floats(n, static_cast<uint32_t>(n + 11), 100.0f);
      std::vector<uint8_t> q(test::row_bytes(type, n));
      ASSERT_TRUE(quantize_row(type, x.data(), q.data(), n).ok());
      std::vector<float> back(n);
      dequantize_row(type, q.data(), back.data(), n);
      const double rel = type == TensorType::kF32 ? 0 : type == TensorType::kF16 ? 0x1p-11 : 0x1p-8;
      for (int64_t i = 0; i < n; ++i) {
        float expected = x[i];
        if (type == TensorType::kF16)
          expected = fp16_to_fp32(fp32_to_fp16(x[i]));
        if (type == TensorType::kBF16)
          expected = bf16_to_fp32(fp32_to_bf16(x[i]));
        ASSERT_EQ(back[i], expected) << tensor_type_name(type) << " i=" << i;
        ASSERT_LE(std::fabs(double(back[i]) - x[i]), rel * std::fabs(double(x[i])) + 0x1p-24);
      }
    }
  }
}

TEST(Quantize, RejectsPartialBlocks) {
  float x[64] = {};
  uint8_t out[256];
  EXPECT_EQ(quantize_row(TensorType::kQ8_0, x, out, 33).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_row(TensorType::kQ4_0, x, out, 16).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_row(TensorType::kF16, x, out, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_row(TensorType::kQ4_K, x, out, 32).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(quantize_row(static_cast<TensorType>(16), x, out, 32).code(), StatusCode::kUnsupported);
  EXPECT_TRUE(quantize_row(TensorType::kF32, x, out, 7).ok());
}

// Every quantized type, table-driven: random blocks (any bytes, any finite scales)
// and edge blocks (all-zero and all-one bits, the largest, smallest subnormal,
// negative and zero scales) decode bit for bit to the float64 reading of the
// format (block_reference.h) rounded to float, signed zeros included.
TEST(Dequantize, EveryTypeMatchesTheFormatDefinitionBitForBit) {
  const uint16_t edge_scales[] = {0x7bff, 0xfbff, 0x0001, 0x8001, 0x0000, 0x8000, 0x3c00, 0xb800};
  std::mt19937 rng(12);
  for (TensorType type : test::ref_quantized_types()) {
    SCOPED_TRACE(tensor_type_name(type));
    const auto& traits = tensor_type_traits(type);
    const size_t bytes = traits.block_bytes;
    std::vector<std::vector<uint8_t>> blocks;
    for (int k = 0; k < 40; ++k) { // random bytes, random finite scales
      std::vector<uint8_t> b(bytes);
      for (uint8_t& v : b)
        v = static_cast<uint8_t>(rng());
      for (size_t off : test::ref_half_fields(type))
        if (((b[off + 1] >> 2) & 0x1f) == 0x1f) // inf / nan exponent: make it finite
          b[off + 1] &= 0xbf;
      blocks.push_back(b);
    }
    for (uint8_t fill : {0x00, 0xff, 0x55, 0xaa})
      for (uint16_t scale : edge_scales) {
        std::vector<uint8_t> b(bytes, fill);
        for (size_t off : test::ref_half_fields(type))
          std::memcpy(&b[off], &scale, 2);
        blocks.push_back(b);
      }
    // E8M0 scales: the two subnormal ones, 1, and the largest (255 decodes like the others:
    // its large codes overflow to infinity).
    for (size_t off : test::ref_e8m0_fields(type))
      for (uint8_t fill : {0x00, 0xff, 0x55, 0xaa})
        for (uint8_t e : {0, 1, 2, 127, 128, 254, 255}) {
          std::vector<uint8_t> b(bytes, fill);
          b[off] = e;
          blocks.push_back(b);
        }
    std::vector<uint8_t> row;
    for (const auto& b : blocks)
      row.insert(row.end(), b.begin(), b.end());
    const int64_t n = static_cast<int64_t>(blocks.size()) * traits.block_values;
    std::vector<float> out(n, 1234.5f);
    dequantize_row(type, row.data(), out.data(), n);
    for (size_t k = 0; k < blocks.size(); ++k) {
      const std::vector<test::RefValue> ref = test::ref_block(type, blocks[k].data());
      ASSERT_EQ(static_cast<int64_t>(ref.size()), traits.block_values);
      for (int64_t j = 0; j < traits.block_values; ++j) {
        const float want = static_cast<float>(ref[j].value());
        const float got = out[k * traits.block_values + j];
        ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
            << "block " << k << " value " << j << ": got " << got << " want " << want;
      }
    }
  }
}

// The new types' reference quantizers write blocks that decode close to the input:
// relative RMS error below a bound per type (a broken layout gives ~1).
TEST(Quantize, EveryQuantizedTypeRoundTripsWithinItsPrecision) {
  const std::pair<TensorType, double> bounds[] = {
      {TensorType::kQ4_1, 0.08},  {TensorType::kQ5_0, 0.05},  {TensorType::kQ5_1, 0.04},
      {TensorType::kIQ4_NL, 0.1}, {TensorType::kQ2_K, 0.45},  {TensorType::kQ3_K, 0.2},
      {TensorType::kQ4_K, 0.1},   {TensorType::kQ5_K, 0.05},  {TensorType::kQ6_K, 0.03},
      {TensorType::kIQ4_XS, 0.1}, {TensorType::kQ8_0, 0.008}, {TensorType::kQ4_0, 0.1},
      {TensorType::kMXFP4, 0.15}};
  for (const auto& [type, bound] : bounds) {
    SCOPED_TRACE(tensor_type_name(type));
    const int64_t n = 4096;
    for (float offset : {0.0f, 0.5f}) { // centred, and shifted (asymmetric blocks)
      std::vector<float> x = test::random_floats(n, 77, 2.0f);
      for (float& v : x)
        v += offset;
      std::vector<uint8_t> q(test::row_bytes(type, n));
      ASSERT_TRUE(quantize_row(type, x.data(), q.data(), n).ok());
      std::vector<float> back(n);
      dequantize_row(type, q.data(), back.data(), n);
      double err = 0, energy = 0;
      for (int64_t i = 0; i < n; ++i) {
        err += (double(back[i]) - x[i]) * (double(back[i]) - x[i]);
        energy += double(x[i]) * x[i];
      }
      EXPECT_LT(std::sqrt(err / energy), bound) << "offset " << offset;
    }
    std::vector<float> zeros(256, 0.0f), back(256, 1.0f);
    std::vector<uint8_t> q(test::row_bytes(type, 256));
    ASSERT_TRUE(quantize_row(type, zeros.data(), q.data(), 256).ok());
    dequantize_row(type, q.data(), back.data(), 256);
    for (float v : back)
      ASSERT_EQ(v, 0.0f) << "zeros must stay zeros";
  }
}

// ggml's id 39, its name, and 17 bytes per 32 values (4.25 bits per weight).
TEST(Quantize, Mxfp4IsAKnownType) {
  const TensorTypeTraits* t = tensor_type_traits(39);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, TensorType::kMXFP4);
  EXPECT_STREQ(t->name, "mxfp4");
  EXPECT_EQ(t->block_values, 32);
  EXPECT_EQ(t->block_bytes, 17u);
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kMXFP4), 4.25);
  EXPECT_EQ(parse_tensor_type("MXFP4").value(), TensorType::kMXFP4);
  EXPECT_EQ(tensor_bytes(TensorType::kMXFP4, 96).value(), 51u);
  EXPECT_FALSE(tensor_bytes(TensorType::kMXFP4, 48).ok());
}

// MXFP4 blocks built by hand: every code under the two subnormal scales (e = 0, 1), the
// smallest normal one, 1/2, 1 and the largest (e = 254, whose large codes overflow),
// against E2M1's values written out (halved back from the table) times 2^(e - 127);
// code 8 (E2M1's -0) reads as +0, as ggml's does.
TEST(Dequantize, Mxfp4HandBuiltBlocksGiveExactValues) {
  const double e2m1[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6};
  for (int e : {0, 1, 2, 127, 128, 254}) {
    uint8_t block[17] = {static_cast<uint8_t>(e)};
    for (int j = 0; j < 16; ++j) // codes 0..15 low, 15..0 high
      block[1 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
    float out[32];
    dequantize_row(TensorType::kMXFP4, block, out, 32);
    for (int j = 0; j < 16; ++j) {
      const float lo = static_cast<float>(std::ldexp(e2m1[j], e - 127));
      const float hi = static_cast<float>(std::ldexp(e2m1[15 - j], e - 127));
      EXPECT_EQ(std::memcmp(&out[j], &lo, 4), 0) << "e=" << e << " code " << j << ": " << out[j];
      EXPECT_EQ(std::memcmp(&out[j + 16], &hi, 4), 0)
          << "e=" << e << " code " << 15 - j << ": " << out[j + 16];
    }
  }
  // Spot values: e = 0 is 2^-127, e = 254 is 2^127; 4 * 2^127 is past the float range.
  uint8_t tiny[17] = {0, 0x01}, huge[17] = {254, 0x62};
  float out[32];
  dequantize_row(TensorType::kMXFP4, tiny, out, 32);
  EXPECT_EQ(out[0], 0x1p-128f);
  dequantize_row(TensorType::kMXFP4, huge, out, 32);
  EXPECT_EQ(out[0], 0x1p127f);                                // code 2: 1.0 * 2^127
  EXPECT_EQ(out[16], std::numeric_limits<float>::infinity()); // code 6: 4 * 2^127
}

// The scale puts the largest magnitude at 8..16 times 2^(e - 128) (so 7 -> e = 127,
// d = 0.5); each value takes the nearest code, the smaller magnitude on a tie; beyond
// 12 steps a value clips to 12.
TEST(Quantize, Mxfp4KnownFloatsGiveKnownBytes) {
  float x[32] = {};
  const float lows[9] = {7, -6, 3, 1.25f, -0.25f, 0.2f, 0.3f, 5, -4.5f};
  std::memcpy(x, lows, sizeof lows);
  x[16] = 2.5f;   // 5 steps: tie of 4 and 6 -> 4
  x[17] = -1.75f; // -3.5: tie of -3 and -4 -> -3
  x[31] = -7;     // -14: clips to -12
  uint8_t block[17];
  ASSERT_TRUE(quantize_row(TensorType::kMXFP4, x, block, 32).ok());
  // Codes: 7 (14 -> 12), 15 (-12), 5 (6), 2 (2.5 -> 2), 0 (-0.5 -> 0), 0 (0.4), 1 (0.6),
  // 6 (10 -> 8), 14 (-9 -> -8); high nibbles 4 (4), 11 (-3), 15 (-12) at j = 15.
  const uint8_t expected[17] = {0x7f, 0x47, 0xbf, 0x05, 0x02, 0x00, 0x00, 0x01, 0x06,
                                0x0e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0};
  for (int i = 0; i < 17; ++i)
    EXPECT_EQ(block[i], expected[i]) << "byte " << i;
}

// The exponent is floor(log2 amax) + 125 exactly, clamped to the byte's range: just
// below a power of two it stays in the lower octave; tiny blocks take e = 0; zeros stay
// zero.
TEST(Quantize, Mxfp4ScaleExponentEdges) {
  const std::pair<float, int> cases[] = {{std::nextafter(8.0f, 0.0f), 127},
                                         {8.0f, 128},
                                         {1.0f, 125},
                                         {0x1p-125f, 0},
                                         {0x1p-130f, 0},
                                         {std::numeric_limits<float>::max(), 252},
                                         {0.0f, 0}};
  for (const auto& [amax, e] : cases) {
    float x[32] = {};
    x[3] = -amax;
    uint8_t block[17];
    ASSERT_TRUE(quantize_row(TensorType::kMXFP4, x, block, 32).ok());
    EXPECT_EQ(block[0], e) << "amax " << amax;
  }
}

// Round trip, value by value: each block's scale d = 2^(e - 128) has 8 <= amax / d < 16,
// and every value is within half the table's gap around it (0.5 d up to 4 d, 1 d up to
// 8 d, 2 d up to 12 d), or clipped from beyond 12 d to 12 d.
TEST(Quantize, Mxfp4RoundTripWithinHalfTheTableGap) {
  for (int64_t n : {32, 96, 4160}) {
    std::vector<float> x = test::random_floats(n, static_cast<uint32_t>(n), 3.0f);
    for (int64_t i = 0; i < n; i += 64) // blocks of very different magnitudes
      x[i] *= 1e4f;
    std::vector<uint8_t> q(test::row_bytes(TensorType::kMXFP4, n));
    ASSERT_TRUE(quantize_row(TensorType::kMXFP4, x.data(), q.data(), n).ok());
    std::vector<float> back(n);
    dequantize_row(TensorType::kMXFP4, q.data(), back.data(), n);
    for (int64_t b = 0; b < n / 32; ++b) {
      double amax = 0;
      for (int j = 0; j < 32; ++j)
        amax = std::max(amax, std::fabs(double(x[b * 32 + j])));
      const double d = std::ldexp(1.0, q[b * 17] - 128);
      ASSERT_GE(amax / d, 8.0) << "block " << b;
      ASSERT_LT(amax / d, 16.0) << "block " << b;
      for (int j = 0; j < 32; ++j) {
        const int64_t i = b * 32 + j;
        const double steps = std::fabs(double(x[i])) / d;
        const double bound = steps > 12 ? steps - 12 : steps > 8 ? 2 : steps > 4 ? 1 : 0.5;
        ASSERT_LE(std::fabs(double(back[i]) - x[i]), bound * d) << "n=" << n << " i=" << i;
      }
    }
  }
}

} // namespace
} // namespace pshard
