#include "runtime/backends/emu/emu_queue.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sys/prctl.h>

namespace pshard::emu {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t Link::cost_ns(uint64_t bytes) const {
  return static_cast<int64_t>((latency_s + static_cast<double>(bytes) / bytes_per_s) * 1e9);
}

namespace {

// Sleeps most of the way, then spins briefly: the OS's wake-up latency would otherwise
// make every small copy slower than the link it emulates. The queue threads ask for a
// timer slack of 1 us (prctl), so the spin stays short and leaves the cores to the CPU
// sub-layers that run meanwhile.
void wait_until_ns(int64_t deadline) {
  constexpr int64_t kSpinNs = 60'000;
  const int64_t now = now_ns();
  if (deadline - now > kSpinNs)
    std::this_thread::sleep_for(std::chrono::nanoseconds(deadline - now - kSpinNs));
  while (now_ns() < deadline) {
    // Busy: yielding here can lose the core for a whole time slice on a loaded host.
  }
}

} // namespace

EmuQueue::EmuQueue(std::string name, EventHub& hub, const Link* link)
    : name_(std::move(name)), hub_(hub), link_(link), thread_([this] { run(); }) {}

EmuQueue::~EmuQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EmuQueue::push(Task t) {
  t.enqueue_ns = now_ns();
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake = tasks_.empty(); // the thread only sleeps on an empty queue
    tasks_.push_back(std::move(t));
  }
  if (wake)
    cv_.notify_all();
}

void EmuQueue::push_work(std::function<void()> fn) {
  Task t;
  t.kind = Kind::kWork;
  t.fn = std::move(fn);
  push(std::move(t));
}

void EmuQueue::push_copy(void* dst, const void* src, uint64_t bytes) {
  Task t;
  t.kind = Kind::kCopy;
  t.dst = dst;
  t.src = src;
  t.bytes = bytes;
  push(std::move(t));
}

void EmuQueue::push_record(EventState* event, uint64_t seq) {
  Task t;
  t.kind = Kind::kRecord;
  t.event = event;
  t.seq = seq;
  push(std::move(t));
}

void EmuQueue::push_wait(const EventState* event, uint64_t seq) {
  Task t;
  t.kind = Kind::kWait;
  t.wait_event = event;
  t.seq = seq;
  push(std::move(t));
}

void EmuQueue::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return tasks_.empty() && !busy_; });
}

void EmuQueue::run() {
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  for (;;) {
    Task t;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty())
        return; // stopping with nothing left
      t = std::move(tasks_.front());
      tasks_.pop_front();
      busy_ = true;
    }
    execute(t);
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    cv_.notify_all();
  }
}

void EmuQueue::execute(Task& t) {
  // A task starts when it was enqueued or when the previous one finished, whichever
  // is later; on the virtual clock for copies and marks, on the real one for work.
  const int64_t start = std::max(t.enqueue_ns, ready_ns_);
  switch (t.kind) {
  case Kind::kWork:
    t.fn();
    ready_ns_ = now_ns();
    return;
  case Kind::kCopy: {
    std::memcpy(t.dst, t.src, t.bytes);
    const int64_t done = link_ ? start + link_->cost_ns(t.bytes) : now_ns();
    wait_until_ns(done);
    ready_ns_ = done;
    return;
  }
  case Kind::kRecord: {
    std::lock_guard<std::mutex> lock(hub_.mu);
    t.event->completed = std::max(t.event->completed, t.seq);
    t.event->time_ns = start;
    ready_ns_ = start;
    hub_.cv.notify_all();
    return;
  }
  case Kind::kWait: {
    std::unique_lock<std::mutex> lock(hub_.mu);
    hub_.cv.wait(lock, [&] { return t.wait_event->completed >= t.seq; });
    ready_ns_ = std::max(start, t.wait_event->time_ns);
    return;
  }
  }
}

} // namespace pshard::emu
