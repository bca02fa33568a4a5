// fp16 / bf16 conversions: exhaustive over all 16-bit patterns, every rounding
// midpoint, and the edge cases (ties to even, overflow, subnormals, NaN).
#include "runtime/kernels/convert.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

namespace pshard {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The value of a half, from its definition, in double.
double half_value(uint16_t h) {
  const int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  if (e == 31)
    v = m == 0 ? INFINITY : NAN;
  return sign ? -v : v;
}

bool is_half_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

TEST(Fp16, EveryHalfDecodesToItsValueAndRoundTrips) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = fp16_to_fp32(h);
    if (is_half_nan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << i;
      EXPECT_TRUE(is_half_nan(fp32_to_fp16(f))) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), half_value(h)) << std::hex << i;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << i;
    ASSERT_EQ(fp32_to_fp16(f), h) << std::hex << i;
  }
}

// Between every pair of adjacent finite halves: the exact midpoint rounds to the
// even one, and one float ulp either side rounds to the nearer one.
TEST(Fp16, EveryMidpointRoundsToNearestEven) {
  for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
    for (uint16_t h = 0; h < 0x7bff; ++h) { // pairs up to 65504; the tie with inf is an edge case
      const uint16_t lo = sign | h, hi = static_cast<uint16_t>(sign | (h + 1));
      const float mid = static_cast<float>((half_value(lo) + half_value(hi)) / 2); // exact
      const uint16_t even = (h & 1) ? hi : lo;
      ASSERT_EQ(fp32_to_fp16(mid), even) << std::hex << lo;
      const float toward_hi = std::nextafter(mid, sign ? -INFINITY : INFINITY);
      const float toward_lo = std::nextafter(mid, 0.0f);
      ASSERT_EQ(fp32_to_fp16(toward_hi), hi) << std::hex << lo;
      ASSERT_EQ(fp32_to_fp16(toward_lo), lo) << std::hex << lo;
    }
  }
}

TEST(Fp16, EdgeCases) {
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);     // tie -> even
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02); // tie -> even (up)
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);            // largest finite
  EXPECT_EQ(fp32_to_fp16(65519.996f), 0x7bff);          // just below the tie
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);            // tie with 65536 -> inf
  EXPECT_EQ(fp32_to_fp16(1e9f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-1e9f), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(INFINITY), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001); // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000); // tie -> even zero
  EXPECT_EQ(fp32_to_fp16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * 0x1p-25f), 0x0002);            // tie -> even
  EXPECT_EQ(fp32_to_fp16(-0x1p-26f), 0x8000);               // underflow keeps the sign
  EXPECT_EQ(fp32_to_fp16(0x1p-149f), 0x0000);               // float subnormal
  EXPECT_EQ(fp32_to_fp16(0x1.ff8p-15f), 0x03ff);            // largest subnormal
  EXPECT_EQ(fp32_to_fp16(0x1.ff8p-15f + 0x1p-25f), 0x0400); // its tie goes up to even normal
  EXPECT_EQ(fp32_to_fp16(0x1p-14f), 0x0400);                // smallest normal
  const uint16_t nan = fp32_to_fp16(std::nanf(""));
  EXPECT_TRUE(is_half_nan(nan));
  EXPECT_TRUE(nan & 0x0200) << "quiet";
  EXPECT_TRUE(is_half_nan(fp32_to_fp16(from_bits(0x7f800001u)))) << "signalling NaN stays NaN";
  EXPECT_EQ(fp16_to_fp32(0x7c00), INFINITY);
  EXPECT_EQ(fp16_to_fp32(0xfc00), -INFINITY);
  EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);
}

#ifdef __FLT16_MAX__
// The compiler's own _Float16 conversion (IEEE round to nearest even) as an oracle
// over random floats of every magnitude.
TEST(Fp16, MatchesCompilerFloat16OnRandomFloats) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 20; ++i) {
    uint32_t bits = rng();
    if (i % 2) // half the samples in the range where halves live
      bits = (bits & 0x807fffffu) | ((100u + (bits >> 23) % 45u) << 23);
    const float f = from_bits(bits);
    if (std::isnan(f))
      continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, sizeof ref_bits);
    ASSERT_EQ(fp32_to_fp16(f), ref_bits) << std::hex << bits;
  }
}
#endif

TEST(Bf16, RoundTripAndRounding) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = bf16_to_fp32(h);
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(f))));
    else
      ASSERT_EQ(fp32_to_bf16(f), h) << std::hex << i;
  }
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000u)), 0x3f80); // tie -> even
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000u)), 0x3f82); // tie -> even (up)
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(from_bits(0x7f800001u)))));
}

} // namespace
} // namespace pshard
