// libpshard_cuda.so's one exported symbol: the table of factories the runtime's loader
// (runtime/backends/plugin/cuda_plugin.h) reads after dlopen. Everything else in the
// plugin — this backend, the static CUDA runtime, its own copies of the runtime
// libraries — is hidden, so it cannot clash with the host's copies.
#include "runtime/backends/cuda/cuda_device.h"
#include "runtime/backends/cuda/cuda_measurer.h"
#include "runtime/backends/plugin/cuda_plugin_api.h"
#include "runtime/backends/plugin/plugin_build_id.h"

namespace pshard {
namespace {

Status probe() { return cuda::cuda_device_available(); }

Result<std::unique_ptr<Device>> create_device(int device_ordinal) {
  CudaOptions o;
  o.device_ordinal = device_ordinal;
  PSHARD_ASSIGN_OR_RETURN(auto d, CudaDevice::create(o));
  return std::unique_ptr<Device>(std::move(d));
}

Result<std::unique_ptr<DeviceMeasurer>> create_measurer(int device_ordinal) {
  CudaOptions o;
  o.device_ordinal = device_ordinal;
  PSHARD_ASSIGN_OR_RETURN(auto m, CudaMeasurer::create(o));
  return std::unique_ptr<DeviceMeasurer>(std::move(m));
}

constexpr CudaPluginV1 kTable = {
    kCudaPluginAbiVersion, sizeof(CudaPluginV1), kPluginBuildId, probe,
    create_device,         create_measurer,
};

} // namespace
} // namespace pshard

extern "C" __attribute__((visibility("default"))) const pshard::CudaPluginV1*
pshard_cuda_plugin_v1() {
  return &pshard::kTable;
}
