#include "tools/pshard-bench/memory_bandwidth.h"

#include "runtime/core/thread_pool.h"
#include "runtime/kernels/stream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pshard::bench {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

// A buffer aligned to 2 MiB, asking the kernel for transparent huge pages or
// (huge_pages false) explicitly not, so the two variants differ whatever the
// system's THP default is.
std::unique_ptr<float, FreeDeleter> allocate(size_t bytes, bool huge_pages) {
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  auto* p = static_cast<float*>(std::aligned_alloc(kHugePage, rounded));
#if defined(__linux__)
  if (p != nullptr)
    madvise(p, rounded, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
  (void)huge_pages;
#endif
  return std::unique_ptr<float, FreeDeleter>(p);
}

double median_rate(ThreadPool& pool, const float* data, int64_t per_thread, int n_threads,
                   int repetitions) {
  const int64_t n = per_thread * n_threads;
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

} // namespace

BandwidthProbe measure_read_bandwidth(int n_threads, size_t buffer_bytes, int repetitions) {
  BandwidthProbe probe;
  // Whole 64-float groups per thread, so every part keeps the kernel's alignment.
  const int64_t group = 64;
  const int64_t per_thread = static_cast<int64_t>(buffer_bytes / sizeof(float)) / n_threads /
                             group * group;
  if (per_thread <= 0)
    return probe;
  const size_t bytes = static_cast<size_t>(per_thread * n_threads) * sizeof(float);
  for (bool huge_pages : {false, true}) {
    auto buffer = allocate(bytes, huge_pages);
    if (buffer == nullptr)
      continue;
    float* data = buffer.get();
    for (bool pinned : {false, true}) {
      ThreadPool pool(n_threads, pinned);
      // Touch every page from the thread that will read it (first-touch placement).
      pool.parallel_for(n_threads, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t)
          std::fill(data + t * per_thread, data + (t + 1) * per_thread, 1.0f);
      });
      const double rate = median_rate(pool, data, per_thread, n_threads, repetitions);
      probe.variants.push_back({std::string(huge_pages ? "2m-pages" : "4k-pages") +
                                    (pinned ? " pinned" : " unpinned"),
                                rate});
      probe.best_bytes_per_s = std::max(probe.best_bytes_per_s, rate);
    }
  }
  return probe;
}

} // namespace pshard::bench
