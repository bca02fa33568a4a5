#include "tools/pshard-bench/memory_bandwidth.h"

#include "runtime/core/thread_pool.h"
#include "runtime/kernels/stream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace pshard::bench {

double measure_read_bandwidth(int n_threads, size_t buffer_bytes, int repetitions,
                              bool pin_threads) {
  // Whole 64-float groups per thread, so every part keeps the kernel's alignment.
  const int64_t group = 64;
  const int64_t per_thread = static_cast<int64_t>(buffer_bytes / sizeof(float)) / n_threads /
                             group * group;
  if (per_thread <= 0)
    return 0;
  const int64_t n = per_thread * n_threads;
  auto storage = std::make_unique<float[]>(static_cast<size_t>(n) + 16);
  float* data = storage.get() + (16 - reinterpret_cast<uintptr_t>(storage.get()) / 4 % 16) % 16;
  ThreadPool pool(n_threads, pin_threads);
  // Touch every page from the thread that will read it (first-touch placement).
  pool.parallel_for(n_threads, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t)
      std::fill(data + t * per_thread, data + (t + 1) * per_thread, 1.0f);
  });

  std::vector<float> sums(static_cast<size_t>(n_threads));
  std::vector<double> rates;
  for (int rep = 0; rep <= repetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(n_threads, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t)
        sums[static_cast<size_t>(t)] = stream_sum(data + t * per_thread, per_thread);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep > 0) // the first pass warms the TLB and the pool
      rates.push_back(static_cast<double>(n) * sizeof(float) / s);
  }
  // The sums stay observable so the reads cannot be optimised away.
  volatile float sink = 0;
  for (float s : sums)
    sink = sink + s;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

} // namespace pshard::bench
