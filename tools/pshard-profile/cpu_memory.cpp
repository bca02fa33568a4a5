#include "tools/pshard-profile/cpu_memory.h"

#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace pshard::profiling {

uint64_t sum_words(const uint64_t* words, size_t n) {
  // Independent accumulators: one dependency chain would cap a core far below DRAM speed.
  uint64_t acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j)
      acc[j] += words[i + j];
  uint64_t sum = 0;
  for (int j = 0; j < 8; ++j)
    sum += acc[j];
  for (; i < n; ++i)
    sum += words[i];
  return sum;
}

fb::BandwidthPointT time_read_bandwidth(const HostBuffer& buffer, ThreadPool& pool,
                                        double budget_s) {
  const auto* words = reinterpret_cast<const uint64_t*>(buffer.data());
  const int64_t n_words = static_cast<int64_t>(buffer.size() / sizeof(uint64_t));
  std::atomic<uint64_t> sink{0};
  // Blocks of 64 KiB keep each thread's range contiguous and cache-line aligned.
  constexpr int64_t kBlockWords = 8192;
  const int64_t n_blocks = n_words / kBlockWords;
  const Timing t = time_repeated(
      [&](int) {
        pool.parallel_for(n_blocks, [&](int64_t begin, int64_t end) {
          const uint64_t s = sum_words(words + begin * kBlockWords,
                                       static_cast<size_t>((end - begin) * kBlockWords));
          sink.fetch_add(s, std::memory_order_relaxed);
        });
      },
      budget_s, 5);
  fb::BandwidthPointT p;
  p.threads = static_cast<uint32_t>(pool.size());
  p.buffer_bytes = static_cast<uint64_t>(n_blocks * kBlockWords) * sizeof(uint64_t);
  p.bytes_per_s = static_cast<double>(p.buffer_bytes) / t.seconds;
  p.repetitions = t.repetitions;
  return p;
}

fb::BandwidthPointT time_copy_bandwidth(const HostBuffer& src, HostBuffer& dst,
                                        uint64_t chunk_bytes, double budget_s) {
  const uint64_t size = std::min<uint64_t>(src.size(), dst.size());
  const uint64_t chunk = std::min<uint64_t>(chunk_bytes, size);
  const uint64_t n_chunks = std::max<uint64_t>(1, size / chunk);
  const Timing t = time_repeated(
      [&](int rep) {
        const uint64_t i = static_cast<uint64_t>(rep) % n_chunks;
        // Source and destination chunks differ so neither is still cached from the last call.
        const uint64_t j = (i + n_chunks / 2) % n_chunks;
        std::memcpy(dst.data() + j * chunk, src.data() + i * chunk, chunk);
      },
      budget_s, 5);
  fb::BandwidthPointT p;
  p.threads = 1;
  p.buffer_bytes = chunk;
  p.bytes_per_s = static_cast<double>(chunk) / t.seconds;
  p.repetitions = t.repetitions;
  return p;
}

} // namespace pshard::profiling
