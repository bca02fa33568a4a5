// The device behind a context's backend (runtime/backends/device_factory.h says how the
// emulated GPU is sized and linked after the schedule).
#include "runtime/backends/device_factory.h"
#include "runtime/capi/capi_internal.h"

namespace pshard::capi {

Result<DeviceBackend> device_backend(pshard_backend backend) {
  switch (backend) {
  case PSHARD_BACKEND_CPU:
    return DeviceBackend::kCpu;
  case PSHARD_BACKEND_EMU:
    return DeviceBackend::kEmu;
  case PSHARD_BACKEND_CUDA:
    return DeviceBackend::kCuda;
  }
  return invalid_argument("unknown backend " + std::to_string(static_cast<int>(backend)) +
                          " (expected cpu, emu or cuda)");
}

Result<std::unique_ptr<Device>> make_device(const pshard_context_params& p, const pshard_model& m) {
  PSHARD_ASSIGN_OR_RETURN(DeviceOptions o, device_options(p));
  return pshard::make_device(o, m.schedule ? &*m.schedule : nullptr);
}

} // namespace pshard::capi
