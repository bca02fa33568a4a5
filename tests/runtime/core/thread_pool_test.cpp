#include "runtime/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace pshard {
namespace {

TEST(ThreadPoolTest, CoversEveryIndexExactlyOnceWithContiguousRanges) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 5, 64, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        ASSERT_LE(b, e);
        calls++;
        for (int64_t i = b; i < e; ++i)
          hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "threads " << threads << " n " << n;
      EXPECT_LE(calls.load(), threads);
    }
  }
}

TEST(ThreadPoolTest, MinPerThreadLimitsSplitting) {
  ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.parallel_for(10, [&](int64_t, int64_t) { calls++; }, /*min_per_thread=*/8);
  EXPECT_EQ(calls.load(), 1);
}

TEST(ThreadPoolTest, ReusableAcrossManyJobs) {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int job = 0; job < 500; ++job) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(100, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        sum += i;
    });
    total += sum.load();
  }
  EXPECT_EQ(total, 500 * 4950);
}

#if defined(__linux__)
// A pinned pool pins its creator to CPU 0 only while it lives: threads the creator
// starts afterwards (the next pool's workers) inherit its affinity.
TEST(ThreadPoolTest, PinnedPoolRestoresTheCallersAffinity) {
  cpu_set_t before, after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  {
    ThreadPool pool(2, /*pin_threads=*/true);
    pool.parallel_for(2, [](int64_t, int64_t) {});
  }
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}
#endif

} // namespace
} // namespace pshard
