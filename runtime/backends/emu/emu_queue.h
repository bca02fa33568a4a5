// One queue of the emulated GPU: a thread running its tasks in order, with a virtual
// clock so that throttled copies take exactly latency + bytes / bandwidth each, back to
// back, however late the OS wakes the thread (sleep overshoot does not accumulate).
//
//   EmuQueue copy("copy", link);          // a copy engine throttled to `link`
//   copy.push_copy(dst, src, bytes);      // returns at once; the thread copies
//   copy.push_record(event, seq);
//   copy.drain();                         // the host waits until the queue is idle
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace pshard::emu {

// steady_clock nanoseconds since its epoch.
int64_t now_ns();

// An emulated PCIe link: each copy costs latency + bytes / bytes_per_s.
struct Link {
  double bytes_per_s = 16e9;
  double latency_s = 10e-6;
  int64_t cost_ns(uint64_t bytes) const;
};

// Events are counters: `recorded` counts records enqueued, `completed` the highest
// record a queue has reached, `time_ns` when (on the queue's virtual clock).
struct EventState {
  uint64_t recorded = 0;
  uint64_t completed = 0;
  int64_t time_ns = 0;
};

// What all queues of one device share: the lock and wake-up for event state.
struct EventHub {
  std::mutex mu;
  std::condition_variable cv;
};

class EmuQueue {
public:
  // `link` null: a compute queue (tasks take the time they take).
  EmuQueue(std::string name, EventHub& hub, const Link* link);
  ~EmuQueue();
  EmuQueue(const EmuQueue&) = delete;
  EmuQueue& operator=(const EmuQueue&) = delete;

  void push_work(std::function<void()> fn);
  void push_copy(void* dst, const void* src, uint64_t bytes);
  void push_record(EventState* event, uint64_t seq);
  void push_wait(const EventState* event, uint64_t seq);
  // Returns when every task pushed so far has finished.
  void drain();

private:
  enum class Kind { kWork, kCopy, kRecord, kWait };
  struct Task {
    Kind kind = Kind::kWork;
    std::function<void()> fn;
    void* dst = nullptr;
    const void* src = nullptr;
    uint64_t bytes = 0;
    EventState* event = nullptr;
    const EventState* wait_event = nullptr;
    uint64_t seq = 0;
    int64_t enqueue_ns = 0;
  };
  void push(Task t);
  void run();
  void execute(Task& t);

  std::string name_;
  EventHub& hub_;
  const Link* link_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  bool busy_ = false;
  bool stopping_ = false;
  int64_t ready_ns_ = 0; // virtual time the previous task finished
  std::thread thread_;
};

} // namespace pshard::emu
