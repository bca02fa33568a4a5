#include "runtime/backends/emu/emu_device.h"

#include "runtime/backends/emu/emu_ops.h"

#include <algorithm>
#include <string>

namespace pshard {
namespace {

class EmuEvent final : public DeviceEvent {
public:
  emu::EventState state;
};

const EmuEvent& cast(const DeviceEvent& e) { return static_cast<const EmuEvent&>(e); }
EmuEvent& cast(DeviceEvent& e) { return static_cast<EmuEvent&>(e); }

std::string mib(uint64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB (" + std::to_string(bytes) +
         " bytes)";
}

} // namespace

EmuDevice::EmuDevice(const EmuOptions& options)
    : options_(options), capacity_(options.memory_bytes) {}

Result<std::unique_ptr<EmuDevice>> EmuDevice::create(const EmuOptions& o) {
  if (o.memory_bytes == 0)
    return invalid_argument("the emulated GPU needs a memory size above zero");
  if (!(o.link.bytes_per_s > 0) || !(o.link.latency_s >= 0))
    return invalid_argument("the emulated PCIe link needs a bandwidth above zero and a latency "
                            "of zero or more");
  if (o.compute_threads < 1)
    return invalid_argument("the emulated GPU needs at least one compute thread");
  auto d = std::unique_ptr<EmuDevice>(new EmuDevice(o));
  PSHARD_RETURN_IF_ERROR(d->arena_.reserve(o.memory_bytes));
  d->pool_ = std::make_unique<ThreadPool>(o.compute_threads);
  d->cpu_ = std::make_unique<CpuOps>(*d->pool_);
  for (int q = 0; q < kQueueCount; ++q) {
    const Queue kind = static_cast<Queue>(q);
    d->queues_[static_cast<size_t>(q)] = std::make_unique<emu::EmuQueue>(
        queue_name(kind), d->hub_, kind == Queue::kCompute ? nullptr : &d->options_.link);
  }
  d->ops_ = std::make_unique<emu::EmuOps>(d->queue(Queue::kCompute), *d->cpu_);
  return d;
}

EmuDevice::~EmuDevice() {
  for (auto& q : queues_)
    if (q)
      q->drain();
}

DeviceInfo EmuDevice::info() const { return {"emu", options_.name, options_.memory_bytes}; }

Status EmuDevice::check_capacity(uint64_t bytes) const {
  if (bytes <= capacity_)
    return Status::ok_status();
  return Status(StatusCode::kOutOfMemory, "emulated GPU out of memory: an arena of " + mib(bytes) +
                                              " does not fit its capacity of " + mib(capacity_));
}

void EmuDevice::note_allocation() { peak_ = std::max(peak_, arena_.size()); }

Result<uint8_t*> EmuDevice::allocate_arena(uint64_t bytes) {
  if (arena_allocated_)
    return invalid_argument("the emulated GPU already has an arena; free it first");
  PSHARD_RETURN_IF_ERROR(check_capacity(bytes));
  PSHARD_RETURN_IF_ERROR(arena_.set_size(bytes));
  arena_allocated_ = true;
  note_allocation();
  return arena_.base();
}

Status EmuDevice::resize_arena(uint64_t bytes) {
  if (!arena_allocated_)
    return invalid_argument("the emulated GPU has no arena to resize");
  PSHARD_RETURN_IF_ERROR(check_capacity(bytes));
  if (bytes < arena_.size())
    PSHARD_RETURN_IF_ERROR(synchronize()); // queued work may still touch the tail
  PSHARD_RETURN_IF_ERROR(arena_.set_size(bytes));
  note_allocation();
  return Status::ok_status();
}

void EmuDevice::free_arena() {
  if (!arena_allocated_)
    return;
  (void)synchronize();
  (void)arena_.set_size(0);
  arena_allocated_ = false;
}

Status EmuDevice::set_capacity(uint64_t bytes) {
  if (bytes > options_.memory_bytes)
    return invalid_argument("the emulated GPU's capacity cannot exceed its memory size of " +
                            mib(options_.memory_bytes));
  capacity_ = bytes;
  return Status::ok_status();
}

uint64_t EmuDevice::bytes_copied(Queue q) const { return copied_[static_cast<size_t>(q)]; }

void EmuDevice::copy_to_device(Queue q, void* dst, const void* src, uint64_t bytes) {
  copied_[static_cast<size_t>(q)] += bytes;
  queue(q).push_copy(dst, src, bytes);
}

void EmuDevice::copy_to_host(Queue q, void* dst, const void* src, uint64_t bytes) {
  copied_[static_cast<size_t>(q)] += bytes;
  queue(q).push_copy(dst, src, bytes);
}

Result<std::unique_ptr<DeviceEvent>> EmuDevice::create_event() {
  return std::unique_ptr<DeviceEvent>(std::make_unique<EmuEvent>());
}

void EmuDevice::record(DeviceEvent& event, Queue q) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(hub_.mu);
    seq = ++cast(event).state.recorded;
  }
  queue(q).push_record(&cast(event).state, seq);
}

void EmuDevice::wait(Queue q, const DeviceEvent& event) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(hub_.mu);
    seq = cast(event).state.recorded;
  }
  if (seq > 0)
    queue(q).push_wait(&cast(event).state, seq);
}

Status EmuDevice::synchronize(const DeviceEvent& event) {
  const emu::EventState& s = cast(event).state;
  std::unique_lock<std::mutex> lock(hub_.mu);
  const uint64_t target = s.recorded;
  hub_.cv.wait(lock, [&] { return s.completed >= target; });
  return Status::ok_status();
}

Status EmuDevice::synchronize() {
  // Queued waits only refer to records queued before them, so the queues' work is a
  // DAG and draining them one after the other terminates.
  for (auto& q : queues_)
    q->drain();
  return Status::ok_status();
}

Result<int64_t> EmuDevice::completion_time_ns(const DeviceEvent& event) {
  std::lock_guard<std::mutex> lock(hub_.mu);
  const emu::EventState& s = cast(event).state;
  if (s.completed < s.recorded)
    return invalid_argument("the event has not completed; synchronize on it first");
  return s.time_ns;
}

Ops& EmuDevice::compute() { return *ops_; }

} // namespace pshard
