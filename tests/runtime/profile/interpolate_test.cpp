// interpolate(): hand-computed values on small grids.
#include "runtime/profile/interpolate.h"

#include <cmath>
#include <gtest/gtest.h>

namespace pshard {
namespace {

using Q = std::array<double, kMaxGridAxes>;

TEST(Interpolate, LogAxisIsLinearInLog2) {
  const std::vector<GridCell> cells = {{{1, 0, 0, 0}, 10}, {{4, 0, 0, 0}, 30}};
  const AxisScale scales[] = {AxisScale::kLog};
  EXPECT_DOUBLE_EQ(interpolate(cells, scales, Q{1}), 10);
  EXPECT_NEAR(interpolate(cells, scales, Q{2}), 20, 1e-9); // log2(2) is halfway from 0 to 2
  EXPECT_NEAR(interpolate(cells, scales, Q{std::sqrt(8.0)}), 25, 1e-9); // 3/4 of the way
  EXPECT_DOUBLE_EQ(interpolate(cells, scales, Q{4}), 30);
}

TEST(Interpolate, ClampsOutsideTheGrid) {
  const std::vector<GridCell> cells = {{{2, 0, 0, 0}, 10}, {{8, 0, 0, 0}, 30}};
  const AxisScale log[] = {AxisScale::kLog};
  const AxisScale lin[] = {AxisScale::kLinear};
  EXPECT_DOUBLE_EQ(interpolate(cells, log, Q{1}), 10);
  EXPECT_DOUBLE_EQ(interpolate(cells, log, Q{0}), 10); // non-positive on a log axis: clamped
  EXPECT_DOUBLE_EQ(interpolate(cells, log, Q{1000}), 30);
  EXPECT_DOUBLE_EQ(interpolate(cells, lin, Q{-5}), 10);
  EXPECT_DOUBLE_EQ(interpolate(cells, lin, Q{5}), 20);
}

TEST(Interpolate, BilinearOnAFullGrid) {
  // value = 10 * x + y on a linear grid: bilinear interpolation is exact for it.
  std::vector<GridCell> cells;
  for (double x : {0.0, 2.0})
    for (double y : {0.0, 4.0})
      cells.push_back({{x, y, 0, 0}, 10 * x + y});
  const AxisScale scales[] = {AxisScale::kLinear, AxisScale::kLinear};
  EXPECT_DOUBLE_EQ(interpolate(cells, scales, Q{1, 1}), 11);
  EXPECT_DOUBLE_EQ(interpolate(cells, scales, Q{0.5, 3}), 8);
}

TEST(Interpolate, PartialGridUsesTheCellsEachSliceHas) {
  // At x=1 only y=0 exists; at x=2, y=0 and y=10.
  const std::vector<GridCell> cells = {{{1, 0, 0, 0}, 5}, {{2, 0, 0, 0}, 10}, {{2, 10, 0, 0}, 20}};
  const AxisScale scales[] = {AxisScale::kLinear, AxisScale::kLinear};
  // x=1.5, y=5: slice x=1 gives 5 (clamped), slice x=2 gives 15; halfway: 10.
  EXPECT_DOUBLE_EQ(interpolate(cells, scales, Q{1.5, 5}), 10);
}

TEST(Interpolate, DuplicateCellsAreAveraged) {
  const std::vector<GridCell> cells = {{{1, 0, 0, 0}, 4}, {{1, 0, 0, 0}, 6}};
  const AxisScale scales[] = {AxisScale::kLinear};
  EXPECT_DOUBLE_EQ(interpolate(cells, scales, Q{1}), 5);
}

} // namespace
} // namespace pshard
