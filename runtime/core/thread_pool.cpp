#include "runtime/core/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace pshard {
namespace {

// Tens of microseconds of polling: longer than the gap between two kernels of a
// decode step, far shorter than a scheduler tick. Every kYieldEvery polls the
// thread yields, so an oversubscribed machine still runs the thread being waited for.
constexpr int kSpinIterations = 4000;
constexpr int kYieldEvery = 256;

void cpu_relax(int spin) {
  if (spin % kYieldEvery == kYieldEvery - 1) {
    std::this_thread::yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Part `part` of `parts` contiguous, nearly equal ranges of [0, n).
void part_range(int64_t n, int parts, int part, int64_t* begin, int64_t* end) {
  const int64_t base = n / parts, extra = n % parts;
  *begin = part * base + std::min<int64_t>(part, extra);
  *end = *begin + base + (part < extra ? 1 : 0);
}

bool pin_from_environment() {
  const char* v = std::getenv("PSHARD_PIN_THREADS");
  return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
}

// Best effort: a failure (fewer CPUs than threads, a restricted cpuset) leaves
// the thread where the scheduler puts it.
void pin_to_cpu([[maybe_unused]] std::thread::native_handle_type handle, [[maybe_unused]] int cpu) {
#if defined(__linux__)
  const int n_cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (n_cpus <= 0)
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % n_cpus, &set);
  pthread_setaffinity_np(handle, sizeof set, &set);
#endif
}

} // namespace

ThreadPool::ThreadPool(int n_threads, bool pin_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i)
    workers_.emplace_back([this, i] { worker_loop(i); });
  if (pin_threads || pin_from_environment()) {
#if defined(__linux__)
    // The caller is pinned too, for the pool's lifetime only: threads it creates
    // later inherit its affinity, and a pool pinned for a measurement must not
    // leave the next pool's workers all on CPU 0.
    caller_affinity_ = std::make_unique<cpu_set_t>();
    if (pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), caller_affinity_.get()) != 0)
      caller_affinity_.reset();
    pin_to_cpu(pthread_self(), 0);
#endif
    for (int i = 1; i < n_threads_; ++i)
      pin_to_cpu(workers_[static_cast<size_t>(i - 1)].native_handle(), i);
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  work_cv_.notify_all();
  for (auto& t : workers_)
    t.join();
#if defined(__linux__)
  if (caller_affinity_ != nullptr)
    pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), caller_affinity_.get());
#endif
}

int ThreadPool::hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void ThreadPool::parallel_for(int64_t n, const RangeFn& fn, int64_t min_per_thread) {
  if (n <= 0)
    return;
  const int64_t max_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, min_per_thread));
  const int parts = static_cast<int>(std::min<int64_t>(n_threads_, max_parts));
  if (parts == 1) {
    fn(0, n);
    return;
  }
  job_ = &fn;
  job_n_ = n;
  job_parts_ = parts;
  // Every worker checks in, also those without a part, so none can still be
  // reading this job's fields when the next one is written.
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  {
    // Under the mutex so a worker between its predicate check and its sleep
    // cannot miss the wake-up.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_cv_.notify_all();

  int64_t begin, end;
  part_range(n, parts, 0, &begin, &end);
  fn(begin, end);

  for (int spin = 0; spin < kSpinIterations; ++spin) {
    if (pending_.load(std::memory_order_acquire) == 0)
      return;
    cpu_relax(spin);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
}

uint64_t ThreadPool::wait_for_job(uint64_t seen) {
  for (int spin = 0; spin < kSpinIterations; ++spin) {
    const uint64_t g = generation_.load(std::memory_order_acquire);
    if (g != seen || stopping_.load(std::memory_order_relaxed))
      return g;
    cpu_relax(spin);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  work_cv_.wait(lock, [&] {
    return stopping_.load() || generation_.load(std::memory_order_acquire) != seen;
  });
  return generation_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_job(seen);
    if (stopping_.load())
      return;
    if (index < job_parts_) {
      int64_t begin, end;
      part_range(job_n_, job_parts_, index, &begin, &end);
      (*job_)(begin, end);
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // The caller may have given up spinning: wake it (the mutex orders this
      // after its predicate check).
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

} // namespace pshard
