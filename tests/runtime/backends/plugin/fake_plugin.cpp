// Stand-ins for libpshard_cuda.so, built as plugins exactly like it
// (pshard_add_plugin_module), so the loader's outcomes are tested on any machine:
//   default                a good table whose "GPU" is an emulated one: a Device made
//                          inside a plugin with private copies of the runtime libraries,
//                          used and destroyed by the host
//   FAKE_ABI_VERSION=n     another ABI version
//   FAKE_BUILD_ID="..."    another build
//   FAKE_TABLE_SIZE=n      a smaller (older) table
//   FAKE_NO_ENTRY          no entry point at all
//   FAKE_NEEDS_ABSENT      links a library that is not on its search path (as the CUDA
//                          plugin does libcublasLt on a machine without it)
#include "runtime/backends/emu/emu_device.h"
#include "runtime/backends/plugin/cuda_plugin_api.h"
#include "runtime/backends/plugin/plugin_build_id.h"
#include "runtime/profile/device_measurer.h"

#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION ::pshard::kCudaPluginAbiVersion
#endif
#ifndef FAKE_BUILD_ID
#define FAKE_BUILD_ID ::pshard::kPluginBuildId
#endif
#ifndef FAKE_TABLE_SIZE
#define FAKE_TABLE_SIZE sizeof(::pshard::CudaPluginV1)
#endif

#ifdef FAKE_NEEDS_ABSENT
int pshard_test_absent_dependency(); // in a library the loader cannot find
#endif

namespace pshard {
namespace {

Status probe() {
#ifdef FAKE_NEEDS_ABSENT
  if (pshard_test_absent_dependency() != 0)
    return Status::ok_status();
#endif
  return Status(StatusCode::kDeviceError, "fake plugin: no GPU, an emulated one instead");
}

Result<std::unique_ptr<Device>> create_device(int device_ordinal) {
  EmuOptions o;
  o.memory_bytes = 16ull << 20;
  o.name = "emulated GPU " + std::to_string(device_ordinal) + " from a plugin";
  PSHARD_ASSIGN_OR_RETURN(auto d, EmuDevice::create(o));
  return std::unique_ptr<Device>(std::move(d));
}

Result<std::unique_ptr<DeviceMeasurer>> create_measurer(int) {
  return unsupported("fake plugin: no measurer");
}

const CudaPluginV1 kTable = {FAKE_ABI_VERSION, static_cast<uint32_t>(FAKE_TABLE_SIZE),
                             FAKE_BUILD_ID,    probe,
                             create_device,    create_measurer};

} // namespace
} // namespace pshard

#ifndef FAKE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const pshard::CudaPluginV1*
pshard_cuda_plugin_v1() {
  return &pshard::kTable;
}
#endif
