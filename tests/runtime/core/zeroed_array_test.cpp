// ZeroedArray: every value zero until written, its size as asked, empty without memory,
// movable (buffers are swapped for larger ones when a session's limits grow), and starting on
// a cache line (KV caches are read a head's slice of each row at a time).
#include "runtime/core/zeroed_array.h"

#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <utility>

namespace pshard {
namespace {

TEST(ZeroedArray, HoldsZerosUntilWritten) {
  for (size_t n : {size_t{1}, size_t{1000}, size_t{64} << 20}) { // the last a fresh mapping
    ZeroedArray<float> a(n);
    ASSERT_NE(a.data(), nullptr);
    EXPECT_EQ(a.size(), n);
    EXPECT_TRUE(std::all_of(a.data(), a.data() + std::min<size_t>(n, 4096),
                            [](float v) { return v == 0.0f; }));
    EXPECT_EQ(a.data()[n - 1], 0.0f);
    a.data()[n / 2] = 3.0f;
    ZeroedArray<float> b = std::move(a);
    EXPECT_EQ(b.data()[n / 2], 3.0f);
    EXPECT_EQ(b.size(), n);
    EXPECT_EQ(a.size(), 0u); // NOLINT(bugprone-use-after-move): moved from, empty
  }
  ZeroedArray<uint8_t> empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
}

TEST(ZeroedArray, StartsOnACacheLine) {
  // calloc alone gives 16-byte alignment, and a large block begins 16 bytes past a page.
  for (size_t n : {size_t{1}, size_t{3}, size_t{100}, size_t{4096}, size_t{64} << 20}) {
    ZeroedArray<uint8_t> bytes(n);
    ZeroedArray<float> floats(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % 64, 0u) << n << " bytes";
    EXPECT_EQ(reinterpret_cast<uintptr_t>(floats.data()) % 64, 0u) << n << " floats";
    bytes.data()[n - 1] = 7; // the whole size is writable past the aligned start
    EXPECT_EQ(bytes.data()[n - 1], 7);
    ZeroedArray<uint8_t> moved;
    moved = std::move(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(moved.data()) % 64, 0u);
    EXPECT_EQ(moved.data()[n - 1], 7);
    EXPECT_EQ(bytes.data(), nullptr); // NOLINT(bugprone-use-after-move): moved from, empty
  }
}

TEST(ZeroedArray, RefusesASizeThatOverflows) {
  EXPECT_THROW(ZeroedArray<float>(SIZE_MAX / 2), std::bad_alloc);
}

} // namespace
} // namespace pshard
