#include "tools/pshard-profile/device_backends.h"

#include "tools/pshard-profile/machine_info.h"

namespace pshard::profiling {

Result<DeviceChoice> choose_device(const std::string& backend) {
  DeviceChoice choice;
  if (backend == "cpu") {
    choice.gpu_status = "not measured: --backend cpu";
    return choice;
  }
  if (backend == "emu")
    return unsupported("--backend emu: the emulated GPU is not built yet (it comes with the hybrid "
                       "runtime's emu backend, which will implement DeviceMeasurer); use "
                       "--backend cpu for now");
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
