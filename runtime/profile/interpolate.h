// Interpolation over measured grid cells, axis by axis.
//
// A profile stores throughput at bucketed coordinates (tokens 1, 2, 4…; matrix sizes
// 1 MiB, 16 MiB…; thread counts). interpolate() answers for any coordinate: on each axis
// it finds the two measured values around the query (clamping outside the measured
// range: no extrapolation), recurses into the cells on each of them, and blends the two
// results linearly in the axis's scale (log for sizes and token counts, where
// throughput changes per doubling, linear for thread counts).
//
// Axis by axis over the cells that exist, so an irregular or partial grid still gives a
// sensible answer; on a full grid it is exactly multilinear interpolation.
//
//   std::vector<GridCell> cells = {{{1, 1 << 20}, 10e9}, {{4, 1 << 20}, 30e9}};
//   const AxisScale scales[] = {AxisScale::kLog, AxisScale::kLog};
//   interpolate(cells, scales, {{2, 1 << 20}});   // 20e9: halfway between 1 and 4 in log2
#pragma once

#include <array>
#include <span>
#include <vector>

namespace pshard {

inline constexpr int kMaxGridAxes = 4;

enum class AxisScale { kLinear, kLog };

struct GridCell {
  std::array<double, kMaxGridAxes> at{}; // coordinates; only the first n axes are read
  double value = 0;
};

// Interpolated value at `query` over `cells` (axes = scales.size() <= kMaxGridAxes).
// Precondition: cells is not empty; log-scale coordinates are > 0 (values <= 0 are
// clamped to the smallest positive cell coordinate). Cells with identical coordinates
// are averaged.
double interpolate(std::span<const GridCell> cells, std::span<const AxisScale> scales,
                   const std::array<double, kMaxGridAxes>& query);

} // namespace pshard
