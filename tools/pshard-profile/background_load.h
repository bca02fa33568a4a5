// Loads that run beside a measurement, because in hybrid inference the CPU computes
// while PCIe copies run, and each slows the other (memory bandwidth, and on small
// machines CPU time).
//
// CopyLoad: host->device copies running back to back. With a GPU the device measurer
// makes real copies. Without one, HostCopyLoad stands in: a thread memcpy'ing 8 MiB
// chunks between two buffers much larger than the cache — what a DMA engine does to
// host memory (one read per byte) plus a write, at full speed unless a rate cap is set
// (--copy-rate, e.g. 25G for PCIe 4.0 x16). Unlike real DMA it also takes a core,
// which on a machine whose cores all compute makes the ratios pessimistic; the profile
// records which load was used.
//
// ComputeLoad: the CPU running a kernel in a loop on its threads, while copies are timed.
//
//   HostCopyLoad load(/*buffer_bytes=*/128 << 20, /*rate=*/0);
//   PSHARD_RETURN_IF_ERROR(load.start());
//   ... measure ...
//   PSHARD_ASSIGN_OR_RETURN(double copy_rate, load.stop());
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/device_measurer.h"
#include "tools/pshard-profile/host_buffer.h"

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace pshard::profiling {

class CopyLoad {
public:
  virtual ~CopyLoad() = default;
  virtual std::string description() const = 0;
  virtual Status start() = 0;
  // Stops the copies and returns the bytes/s they achieved since start().
  virtual Result<double> stop() = 0;
};

class HostCopyLoad final : public CopyLoad {
public:
  HostCopyLoad(uint64_t buffer_bytes, double rate_bytes_per_s);
  ~HostCopyLoad() override;
  std::string description() const override;
  Status start() override;
  Result<double> stop() override;

private:
  void run();

  HostBuffer src_;
  HostBuffer dst_;
  double rate_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> copied_{0};
  double started_s_ = 0;
  std::thread thread_;
};

// Copies made by a device measurer (real host->device DMA).
class DeviceCopyLoad final : public CopyLoad {
public:
  explicit DeviceCopyLoad(DeviceMeasurer& device) : device_(device) {}
  std::string description() const override;
  Status start() override { return device_.start_copy_load(kChunkBytes); }
  Result<double> stop() override { return device_.stop_copy_load(); }

private:
  static constexpr uint64_t kChunkBytes = 32u << 20;
  DeviceMeasurer& device_;
};

class ComputeLoad {
public:
  explicit ComputeLoad(std::function<void()> work) : work_(std::move(work)) {}
  ~ComputeLoad() { stop(); }
  void start();
  void stop();

private:
  std::function<void()> work_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace pshard::profiling
