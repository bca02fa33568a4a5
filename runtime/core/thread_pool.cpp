#include "runtime/core/thread_pool.h"

#include <algorithm>

namespace pshard {
namespace {

// Part `part` of `parts` contiguous, nearly equal ranges of [0, n).
void part_range(int64_t n, int parts, int part, int64_t* begin, int64_t* end) {
  const int64_t base = n / parts, extra = n % parts;
  *begin = part * base + std::min<int64_t>(part, extra);
  *end = *begin + base + (part < extra ? 1 : 0);
}

} // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i)
    workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_)
    t.join();
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    job_parts_ = parts;
    pending_ = parts - 1;
    ++generation_;
  }
  work_cv_.notify_all();
  int64_t begin, end;
  part_range(n, parts, 0, &begin, &end);
  fn(begin, end);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const RangeFn* job;
    int64_t n;
    int parts;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
      job = job_;
      n = job_n_;
      parts = job_parts_;
    }
    if (index < parts) {
      int64_t begin, end;
      part_range(n, parts, index, &begin, &end);
      (*job)(begin, end);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0)
        done_cv_.notify_one();
    }
  }
}

} // namespace pshard
