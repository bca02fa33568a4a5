// Pcg32: a small seeded random generator whose output is the same on every
// platform and standard library (std::uniform_real_distribution and friends are
// not), so a seed reproduces a generation anywhere.
//
//   Pcg32 rng(42);
//   float u = rng.next_float();   // uniform in [0, 1)
#pragma once

#include <cstdint>

namespace pshard {

// PCG-XSH-RR 64/32 (M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient
// Statistically Good Algorithms for Random Number Generation", 2014).
class Pcg32 {
public:
  explicit Pcg32(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    state_ = 0;
    next_u32();
    state_ += seed;
    next_u32();
  }

  uint32_t next_u32() {
    const uint64_t old = state_;
    state_ = old * kMultiplier + kIncrement;
    const auto xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rotation = static_cast<uint32_t>(old >> 59u);
    return (xorshifted >> rotation) | (xorshifted << ((32u - rotation) & 31u));
  }

  // Uniform in [0, 1): the top 24 bits as a float's mantissa, so every value is
  // exact and 1.0 is never returned.
  float next_float() { return static_cast<float>(next_u32() >> 8) * (1.0f / 16777216.0f); }

private:
  static constexpr uint64_t kMultiplier = 6364136223846793005ull;
  static constexpr uint64_t kIncrement = 1442695040888963407ull;
  uint64_t state_ = 0;
};

} // namespace pshard
