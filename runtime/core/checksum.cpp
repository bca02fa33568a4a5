#include "runtime/core/checksum.h"

#include <cstring>

namespace pshard {
namespace {

constexpr uint64_t kWordMul = 0x9e3779b97f4a7c15ull; // odd: a bijection of the word
constexpr uint64_t kLaneMul = 0xbf58476d1ce4e5b9ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// One word into a lane: each step is a bijection of the lane, so a changed word always
// changes the lane it enters.
uint64_t step(uint64_t lane, uint64_t word) {
  return rotl(lane ^ (word * kWordMul), 29) * kLaneMul;
}

uint64_t load(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

} // namespace

void Checksum64::add(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  // Lanes start from the running sum, so chunk order matters.
  uint64_t lane[4] = {state_, rotl(state_, 16) + 1, rotl(state_, 32) + 2, rotl(state_, 48) + 3};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k)
      lane[k] = step(lane[k], load(p + i + 8 * k));
  for (; i + 8 <= n; i += 8)
    lane[0] = step(lane[0], load(p + i));
  uint64_t tail = 0;
  if (n > i) // an empty piece may come with a null pointer
    std::memcpy(&tail, p + i, n - i);
  uint64_t s = step(lane[0], tail);
  s = step(s, lane[1]);
  s = step(s, lane[2]);
  s = step(s, lane[3]);
  state_ = step(s, static_cast<uint64_t>(n)); // the length: trailing zeros count
}

} // namespace pshard
