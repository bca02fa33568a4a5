// The machine's memory read bandwidth, measured the way decode reads weights: the
// given number of pool threads each sum-reduce their own contiguous part of a
// buffer much larger than the last-level cache, with the kernels' widest loads.
//
//   double bytes_per_s = measure_read_bandwidth(2, 512 << 20, 9);
#pragma once

#include <cstddef>

namespace pshard::bench {

// Median over `repetitions` passes (after one warm-up pass) of bytes / second.
double measure_read_bandwidth(int n_threads, size_t buffer_bytes, int repetitions,
                              bool pin_threads = false);

} // namespace pshard::bench
