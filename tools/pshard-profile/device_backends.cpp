#include "tools/pshard-profile/device_backends.h"

#include "tools/pshard-profile/machine_info.h"

#include "runtime/backends/emu/emu_measurer.h"
#include "runtime/backends/plugin/cuda_plugin.h"

namespace pshard::profiling {
namespace {

// The GPU through the CUDA plugin (loaded here, only for --backend cuda or auto).
Result<std::unique_ptr<DeviceMeasurer>> cuda_measurer() {
  PSHARD_ASSIGN_OR_RETURN(const CudaPluginV1* cuda, cuda_plugin());
  return cuda->create_measurer(0);
}

// Why auto measured no GPU, worded after what the machine has, so the profile says the
// truth about a GPU it did not measure.
std::string no_gpu_status(const Status& why) {
  if (!nvidia_gpu_visible())
    return "no GPU: no NVIDIA driver or device found";
  return "not measured: an NVIDIA GPU is present but the CUDA backend cannot use it (" +
         why.message() + ")";
}

} // namespace

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
    PSHARD_ASSIGN_OR_RETURN(auto m, cuda_measurer());
    choice.device = std::move(m);
    return choice;
  }
  if (backend == "auto") {
    // The GPU when the plugin loads and finds one; a missing plugin or driver is not an
    // error here, only a reason recorded in the profile.
    Result<const CudaPluginV1*> cuda = cuda_plugin();
    Status usable = cuda.ok() ? (*cuda)->probe() : cuda.status();
    if (usable.ok()) {
      PSHARD_ASSIGN_OR_RETURN(auto m, (*cuda)->create_measurer(0));
      choice.device = std::move(m);
      return choice;
    }
    choice.gpu_status = no_gpu_status(usable);
    return choice;
  }
  return invalid_argument("unknown --backend '" + backend + "' (expected auto, cpu, emu or cuda)");
}

} // namespace pshard::profiling
