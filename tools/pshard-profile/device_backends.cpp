#include "tools/pshard-profile/device_backends.h"

#include "tools/pshard-profile/machine_info.h"

#include "runtime/backends/emu/emu_measurer.h"
#ifdef PSHARD_HAVE_CUDA
#include "runtime/backends/cuda/cuda_measurer.h"
#endif

namespace pshard::profiling {

Result<DeviceChoice> choose_device(const std::string& backend, const EmuSettings& emu) {
  DeviceChoice choice;
  if (backend == "cpu") {
    choice.gpu_status = "not measured: --backend cpu";
    return choice;
  }
  if (backend == "emu") {
    EmuOptions o;
    o.memory_bytes = emu.memory_bytes;
    o.link.bytes_per_s = emu.pcie_gbps * 1e9;
    o.link.latency_s = emu.pcie_latency_us * 1e-6;
    o.compute_threads = emu.compute_threads;
    PSHARD_ASSIGN_OR_RETURN(auto m, EmuMeasurer::create(o));
    choice.device = std::move(m);
    return choice;
  }
  if (backend == "cuda") {
#ifdef PSHARD_HAVE_CUDA
    PSHARD_ASSIGN_OR_RETURN(auto m, CudaMeasurer::create());
    choice.device = std::move(m);
    return choice;
#else
    return unsupported("--backend cuda: this build has no CUDA backend (configure with the CUDA "
                       "toolkit installed, see docs/cuda.md); use --backend cpu or emu");
#endif
  }
  if (backend == "auto") {
#ifdef PSHARD_HAVE_CUDA
    if (cuda::cuda_device_available().ok()) {
      PSHARD_ASSIGN_OR_RETURN(auto m, CudaMeasurer::create());
      choice.device = std::move(m);
      return choice;
    }
#endif
    // Word the status after what the machine has, so the profile says the truth about
    // a GPU it did not measure.
    choice.gpu_status = nvidia_gpu_visible()
                            ? "not measured: an NVIDIA GPU is present but this build has no GPU "
                              "measurer yet (CUDA backend)"
                            : "no GPU: no NVIDIA driver or device found";
    return choice;
  }
  return invalid_argument("unknown --backend '" + backend + "' (expected auto, cpu, emu or cuda)");
}

} // namespace pshard::profiling
