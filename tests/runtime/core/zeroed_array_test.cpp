// ZeroedArray: every value zero until written, its size as asked, empty without memory,
// and movable (buffers are swapped for larger ones when a session's limits grow).
#include "runtime/core/zeroed_array.h"

#include <algorithm>
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

} // namespace
} // namespace pshard
