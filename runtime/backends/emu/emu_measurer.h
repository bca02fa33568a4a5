// pshard-profile's view of the emulated GPU (runtime/profile/device_measurer.h): the
// same primitive timings the CUDA backend answers, measured on an EmuDevice — its
// kernels on its compute thread, its copies through its throttled link — so a profile
// of `--backend emu` describes exactly the device pshard-run --backend emu runs on,
// and plans compiled from it can be checked against their predictions.
//
//   PSHARD_ASSIGN_OR_RETURN(auto m, EmuMeasurer::create(emu_options));
//   PSHARD_ASSIGN_OR_RETURN(double s, m->time_matmul(TensorType::kQ8_0, 1, 4096, 4096));
#pragma once

#include "runtime/backends/emu/emu_device.h"
#include "runtime/profile/device_measurer.h"

#include <atomic>
#include <memory>
#include <thread>

namespace pshard {

class EmuMeasurer final : public DeviceMeasurer {
public:
  static Result<std::unique_ptr<EmuMeasurer>> create(const EmuOptions& options);
  ~EmuMeasurer() override;

  std::string backend_name() const override { return "emu"; }
  Result<fb::GpuInfoT> describe() override;
  std::string matmul_op() const override;
  std::string attention_op() const override;
  Result<double> time_matmul(TensorType type, int64_t n_tokens, int64_t rows,
                             int64_t cols) override;
  Result<double> time_attention(const AttentionShape& shape) override;
  Result<double> time_device_read(uint64_t bytes) override;
  Result<double> time_launch_overhead() override;
  Result<double> time_transfer(Direction direction, HostMemoryKind memory, uint64_t bytes) override;
  Status start_copy_load(uint64_t chunk_bytes) override;
  Result<double> stop_copy_load() override;

private:
  explicit EmuMeasurer(std::unique_ptr<EmuDevice> device) : device_(std::move(device)) {}
  // Device memory for one measurement: the arena grown to `bytes` (never shrunk).
  Result<uint8_t*> scratch(uint64_t bytes);
  // Seconds from enqueueing `work` to its completion on the device (one round trip:
  // right for copies, whose latency a pass pays too).
  Result<double> time_on_device(const std::function<void()>& work);
  // Seconds per `work` when many are enqueued back to back, as a pass enqueues its
  // kernels: the queue hand-off and the wake-up of the synchronize are paid once per
  // batch, not per kernel (a pass synchronizes only where activations cross).
  Result<double> time_back_to_back(const std::function<void()>& work);

  std::unique_ptr<EmuDevice> device_;
  std::vector<uint8_t> host_;
  std::thread load_thread_;
  std::atomic<bool> load_running_{false};
  std::atomic<uint64_t> load_bytes_{0};
  double load_seconds_ = 0;
};

} // namespace pshard
