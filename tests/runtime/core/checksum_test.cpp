// Checksum64 tells damaged bytes from good ones: the same bytes in the same pieces give
// the same sum; a flipped bit anywhere, appended zeros, swapped pieces or a piece cut
// elsewhere give another.
#include "runtime/core/checksum.h"

#include <gtest/gtest.h>
#include <set>
#include <vector>

namespace pshard {
namespace {

uint64_t sum_of(const std::vector<unsigned char>& bytes, std::vector<size_t> cuts = {}) {
  Checksum64 s;
  size_t at = 0;
  cuts.push_back(bytes.size());
  for (size_t cut : cuts) {
    s.add(bytes.data() + at, cut - at);
    at = cut;
  }
  return s.value();
}

std::vector<unsigned char> bytes(size_t n) {
  std::vector<unsigned char> b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>((i * 131 + 7) & 0xff);
  return b;
}

TEST(Checksum64, EveryFlippedBitChangesTheSum) {
  for (size_t n : {0u, 1u, 7u, 8u, 31u, 32u, 33u, 100u, 1000u}) {
    const std::vector<unsigned char> good = bytes(n);
    const uint64_t want = sum_of(good);
    EXPECT_EQ(sum_of(good), want) << "deterministic";
    std::set<uint64_t> seen = {want};
    for (size_t i = 0; i < n; ++i)
      for (int bit = 0; bit < 8; ++bit) {
        std::vector<unsigned char> bad = good;
        bad[i] ^= static_cast<unsigned char>(1 << bit);
        seen.insert(sum_of(bad));
      }
    EXPECT_EQ(seen.size(), 1 + 8 * n) << n << " bytes: each flip its own sum";
  }
}

TEST(Checksum64, LengthOrderAndPiecesCount) {
  const std::vector<unsigned char> b = bytes(96);
  std::vector<unsigned char> longer = b;
  longer.push_back(0);
  EXPECT_NE(sum_of(longer), sum_of(b)) << "a trailing zero";
  EXPECT_EQ(sum_of(b, {40}), sum_of(b, {40}));
  EXPECT_NE(sum_of(b, {40}), sum_of(b, {48})) << "the pieces are part of the sum";
  std::vector<unsigned char> swapped(b.begin() + 48, b.end());
  swapped.insert(swapped.end(), b.begin(), b.begin() + 48);
  EXPECT_NE(sum_of(swapped, {48}), sum_of(b, {48})) << "pieces in another order";
  const std::vector<unsigned char> zeros(64, 0), more_zeros(72, 0);
  EXPECT_NE(sum_of(zeros), sum_of(more_zeros));
  Checksum64 empty, none;
  empty.add(nullptr, 0); // an empty vector's data(): counted as a piece, never read
  EXPECT_NE(empty.value(), none.value());
  Checksum64 again;
  again.add(nullptr, 0);
  EXPECT_EQ(again.value(), empty.value());
}

} // namespace
} // namespace pshard
