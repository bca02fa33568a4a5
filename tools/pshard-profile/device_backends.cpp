#include "tools/pshard-profile/device_backends.h"

#include "tools/pshard-profile/machine_info.h"

#include "runtime/backends/emu/emu_measurer.h"

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
  if (backend == "cuda")
    return unsupported("--backend cuda: GPU measurement is not built yet (it comes with the CUDA "
                       "backend, which will implement DeviceMeasurer); use --backend cpu for now");
  if (backend == "auto") {
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
