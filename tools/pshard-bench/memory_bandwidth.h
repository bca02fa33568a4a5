// The machine's memory read bandwidth, measured the way decode reads weights: the
// given number of pool threads each sum-reduce their own contiguous part of a
// buffer much larger than the last-level cache, with the kernels' widest loads.
//
//   BandwidthProbe p = measure_read_bandwidth(2, 512 << 20, 9);
//   p.best_bytes_per_s   // the denominator of the bench's "% mem bw"
//
// The figure is the best the machine reaches, not one configuration's: a ratio
// against a low denominator would flatter the kernels. Pinned threads and huge
// pages can each read faster (on a VM, 4 KiB guest pages cost nested page walks
// that 2 MiB pages avoid; on this project's 2-vCPU EPYC 2 MiB pages read ~15 %
// faster), so every combination is measured and the highest median wins.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pshard::bench {

struct BandwidthVariant {
  std::string name;    // e.g. "4k-pages unpinned"
  double bytes_per_s;  // median over the passes
};

struct BandwidthProbe {
  std::vector<BandwidthVariant> variants;
  double best_bytes_per_s = 0;
};

// Medians over `repetitions` passes (after one warm-up pass) per variant.
BandwidthProbe measure_read_bandwidth(int n_threads, size_t buffer_bytes, int repetitions);

} // namespace pshard::bench
