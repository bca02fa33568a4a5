#include "runtime/profile/interpolate.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

double to_scale(double x, AxisScale scale) {
  return scale == AxisScale::kLog ? std::log(std::max(x, 1e-300)) : x;
}

double interpolate_axis(std::vector<const GridCell*> cells, std::span<const AxisScale> scales,
                        const std::array<double, kMaxGridAxes>& query, size_t axis) {
  if (axis == scales.size()) {
    double sum = 0;
    for (const GridCell* c : cells)
      sum += c->value;
    return sum / static_cast<double>(cells.size());
  }
  std::vector<double> values;
  values.reserve(cells.size());
  for (const GridCell* c : cells)
    values.push_back(c->at[axis]);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());

  const double q = query[axis];
  // The measured values at or around q; equal when q is outside or exactly on one.
  double lo = values.front();
  double hi = values.back();
  if (q <= lo) {
    hi = lo;
  } else if (q >= hi) {
    lo = hi;
  } else {
    auto upper = std::lower_bound(values.begin(), values.end(), q);
    hi = *upper;
    lo = (*upper == q) ? q : *(upper - 1);
  }

  auto on_value = [&](double v) {
    std::vector<const GridCell*> subset;
    for (const GridCell* c : cells)
      if (c->at[axis] == v)
        subset.push_back(c);
    return interpolate_axis(std::move(subset), scales, query, axis + 1);
  };
  const double at_lo = on_value(lo);
  if (hi == lo)
    return at_lo;
  const double at_hi = on_value(hi);
  const AxisScale scale = scales[axis];
  const double t =
      (to_scale(q, scale) - to_scale(lo, scale)) / (to_scale(hi, scale) - to_scale(lo, scale));
  return at_lo + t * (at_hi - at_lo);
}

} // namespace

double interpolate(std::span<const GridCell> cells, std::span<const AxisScale> scales,
                   const std::array<double, kMaxGridAxes>& query) {
  if (cells.empty())
    return 0;
  std::vector<const GridCell*> all;
  all.reserve(cells.size());
  for (const GridCell& c : cells)
    all.push_back(&c);
  const size_t axes = std::min(scales.size(), static_cast<size_t>(kMaxGridAxes));
  return interpolate_axis(std::move(all), scales.first(axes), query, 0);
}

} // namespace pshard
