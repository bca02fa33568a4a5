#include "runtime/kernels/convert.h"

#include "runtime/kernels/fp16_inline.h"

namespace pshard {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

} // namespace

float fp16_to_fp32(uint16_t h) { return kernels::half_to_float(h); }

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;

  if (ax > 0x7f800000u) // NaN: keep the top payload bits and make sure it stays a (quiet) NaN
    return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x47800000u) // >= 65536 (or inf): beyond even the rounding range of 65504
    return static_cast<uint16_t>(sign | 0x7c00u);

  if (ax >= 0x38800000u) { // a normal half (or one that rounds up to 65536 = inf)
    // Rebias the exponent from 127 to 15, then drop 13 mantissa bits rounding to
    // nearest even; a carry out of the mantissa correctly bumps the exponent.
    const uint32_t v = ax - 0x38000000u;
    const uint32_t rounded = v + 0x0fffu + ((v >> 13) & 1u);
    return static_cast<uint16_t>(sign | (rounded >> 13));
  }

  // A half subnormal (or zero): the result counts units of 2^-24. The float is
  // m * 2^(e-150) with m holding the implicit bit, so the count is m >> (126 - e),
  // rounded to nearest even. Rounding up from 0x3ff gives 0x400, the smallest normal.
  const uint32_t e = ax >> 23;
  if (e < 102) // below 2^-25: rounds to zero (2^-25 itself is a tie that goes to even 0)
    return sign;
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e; // 14..24
  uint32_t q = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u)))
    ++q;
  return static_cast<uint16_t>(sign | q);
}

} // namespace pshard
