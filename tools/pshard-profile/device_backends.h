// Choosing what pshard-profile measures besides the CPU (--backend).
//
//   auto  the GPU when the CUDA plugin loads and finds one, else the CPU alone
//   cpu   the CPU alone; the profile records "no GPU"
//   emu   the emulated GPU of the hybrid runtime (host memory, throttled copy engine)
//   cuda  the CUDA GPU (cuBLASLt matmuls, cudaMemcpyAsync), through the CUDA plugin
//         (runtime/backends/plugin/cuda_plugin.h): a missing plugin, NVIDIA library or
//         GPU is an error saying which
//
// emu and cuda implement DeviceMeasurer (runtime/profile/device_measurer.h) in their
// backends; cpu and emu never load the CUDA plugin.
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/device_measurer.h"

#include <memory>
#include <string>

namespace pshard::profiling {

// How the emulated GPU is set up (--backend emu): the same settings pshard-run
// --backend emu takes, so the profile describes the device the plans will run on.
struct EmuSettings {
  double pcie_gbps = 16;     // the emulated link, GB/s
  double pcie_latency_us = 10;
  int compute_threads = 1;   // the emulated GPU's kernel threads
  uint64_t memory_bytes = 8ull << 30;
};

struct DeviceChoice {
  std::unique_ptr<DeviceMeasurer> device; // null: CPU only
  std::string gpu_status;                 // recorded in the profile when device is null
};

Result<DeviceChoice> choose_device(const std::string& backend, const EmuSettings& emu = {});

} // namespace pshard::profiling
