// The device's streams (one per Queue) and events, and the clock that turns an event's
// completion into steady_clock time for traces.
//
// Queues map one to one onto non-blocking streams, so kCopy (weights) and kTransfer
// (hidden states, logits) use separate DMA queues and a small crossing never waits
// behind a large weight upload. Events keep timing enabled: completion_time_ns needs it,
// and the cost (a timestamp per record) is negligible next to a sub-layer.
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/device.h"

#include <array>
#include <cuda_runtime_api.h>

namespace pshard::cuda {

class CudaEvent final : public DeviceEvent {
public:
  explicit CudaEvent(cudaEvent_t e) : event(e) {}
  ~CudaEvent() override { (void)cudaEventDestroy(event); }
  cudaEvent_t event;
  bool recorded = false;
};

class CudaStreams {
public:
  CudaStreams() = default;
  CudaStreams(const CudaStreams&) = delete;
  CudaStreams& operator=(const CudaStreams&) = delete;
  ~CudaStreams();

  // Creates the streams and the reference event of the clock.
  Status create();
  cudaStream_t stream(Queue q) const { return streams_[static_cast<size_t>(q)]; }
  Status synchronize_all() const;

  Result<std::unique_ptr<DeviceEvent>> create_event() const;
  // steady_clock nanoseconds at which a completed, recorded event finished: the
  // reference event's host time plus cudaEventElapsedTime from it.
  Result<int64_t> completion_time_ns(const CudaEvent& event) const;

private:
  std::array<cudaStream_t, kQueueCount> streams_{};
  cudaEvent_t reference_ = nullptr;
  int64_t reference_ns_ = 0;
};

} // namespace pshard::cuda
