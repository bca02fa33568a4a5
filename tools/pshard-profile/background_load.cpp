#include "tools/pshard-profile/background_load.h"

#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace pshard::profiling {
namespace {
constexpr uint64_t kChunkBytes = 8u << 20;
}

HostCopyLoad::HostCopyLoad(uint64_t buffer_bytes, double rate_bytes_per_s)
    : src_(buffer_bytes), dst_(buffer_bytes), rate_(rate_bytes_per_s) {}

HostCopyLoad::~HostCopyLoad() { (void)stop(); }

std::string HostCopyLoad::description() const {
  std::string out = "host memcpy thread standing in for host->device DMA (no GPU), 8 MiB chunks, ";
  if (rate_ > 0)
    out += "capped at " + std::to_string(static_cast<int64_t>(rate_ / 1e6)) + " MB/s";
  else
    out += "full speed";
  return out;
}

Status HostCopyLoad::start() {
  if (thread_.joinable())
    return internal_error("copy load already running");
  if (!src_.ok() || !dst_.ok())
    return Status(StatusCode::kOutOfMemory, "cannot allocate the copy load's buffers");
  stop_ = false;
  copied_ = 0;
  started_s_ = now_seconds();
  thread_ = std::thread([this] { run(); });
  return Status::ok_status();
}

void HostCopyLoad::run() {
  const uint64_t size = std::min<uint64_t>(src_.size(), dst_.size());
  const uint64_t n_chunks = std::max<uint64_t>(1, size / kChunkBytes);
  const uint64_t chunk = std::min<uint64_t>(kChunkBytes, size);
  for (uint64_t i = 0; !stop_.load(std::memory_order_relaxed); ++i) {
    const uint64_t a = i % n_chunks, b = (i + n_chunks / 2) % n_chunks;
    std::memcpy(dst_.data() + b * chunk, src_.data() + a * chunk, chunk);
    const uint64_t done = copied_.fetch_add(chunk, std::memory_order_relaxed) + chunk;
    if (rate_ > 0) {
      // Sleep until the average rate is back under the cap.
      const double due = started_s_ + static_cast<double>(done) / rate_;
      const double wait = due - now_seconds();
      if (wait > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
  }
}

Result<double> HostCopyLoad::stop() {
  if (!thread_.joinable())
    return 0.0;
  stop_ = true;
  thread_.join();
  const double elapsed = now_seconds() - started_s_;
  return elapsed > 0 ? static_cast<double>(copied_.load()) / elapsed : 0.0;
}

std::string DeviceCopyLoad::description() const {
  return device_.backend_name() +
         " host->device copies from pinned memory, 32 MiB each, back to back";
}

void ComputeLoad::start() {
  stop_ = false;
  thread_ = std::thread([this] {
    while (!stop_.load(std::memory_order_relaxed))
      work_();
  });
}

void ComputeLoad::stop() {
  if (!thread_.joinable())
    return;
  stop_ = true;
  thread_.join();
}

} // namespace pshard::profiling
