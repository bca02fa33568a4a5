// A persistent pool of worker threads: no thread is created per operation.
//
//   ThreadPool pool(4);
//   pool.parallel_for(n_rows, [&](int64_t begin, int64_t end) { ... rows [begin, end) ... });
//
// parallel_for splits [0, n) into one contiguous range per thread (so each thread
// streams its own contiguous weight rows), runs them on the workers and the calling
// thread, and returns when all are done. A pool of 1 runs everything inline.
//
// A decode step hands the pool a few hundred small jobs, so hand-off latency
// matters: idle workers spin briefly on an atomic before sleeping on a condition
// variable, and the caller spins while waiting for the last worker. Threads can be
// pinned one per CPU (the constructor flag, or PSHARD_PIN_THREADS=1).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace pshard {

class ThreadPool {
public:
  using RangeFn = std::function<void(int64_t begin, int64_t end)>;

  explicit ThreadPool(int n_threads, bool pin_threads = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn over [0, n) split into contiguous ranges; ranges of fewer than
  // `min_per_thread` items are not split further. Not reentrant: fn must not call
  // parallel_for on the same pool, and one caller at a time.
  void parallel_for(int64_t n, const RangeFn& fn, int64_t min_per_thread = 1);

  // The number of hardware threads, at least 1.
  static int hardware_threads();

private:
  void worker_loop(int index);
  // Waits until generation_ differs from `seen` or the pool stops; spins first.
  uint64_t wait_for_job(uint64_t seen);

  int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // The job: written by the caller before generation_ is bumped (release), read by
  // the workers after they see the new generation (acquire).
  const RangeFn* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_parts_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0}; // workers yet to finish the current generation
  std::atomic<bool> stopping_{false};
#if defined(__linux__)
  // The constructing thread's affinity before pinning, restored on destruction
  // (null when not pinned). Destroy the pool on the thread that created it.
  std::unique_ptr<cpu_set_t> caller_affinity_;
#endif
};

} // namespace pshard
