// The CUDA plugin's entry point: the table libpshard_cuda.so hands the runtime that
// dlopens it (cuda_plugin.h finds and loads it).
//
// The plugin (runtime/backends/cuda, CMake target pshard_cuda) holds the CUDA backend,
// the static CUDA runtime and private copies of the runtime libraries it needs, and is
// the only binary that needs libcublasLt. libpshard and the tools reach it only through
// this table, so a build with CUDA starts and runs cpu/emu on a machine without NVIDIA's
// libraries, and --backend cpu/emu never load them.
//
// Not a stable ABI. C++ objects (Status, Result, Device, DeviceMeasurer) cross this
// table, so a plugin works only with the pshard made by the same build: the same
// compiler and the same headers. The loader checks the table's abi_version and size,
// then its build_id (pshard's version, the compiler, a hash of the headers whose types
// cross: plugin_build_id.h), and refuses a plugin from another build, naming both ids.
//
//   extern "C" const pshard::CudaPluginV1* pshard_cuda_plugin_v1();   // dlsym'd
//   const CudaPluginV1* cuda = ...;                 // checked by load_cuda_plugin
//   PSHARD_RETURN_IF_ERROR(cuda->probe());          // no driver or no GPU: why not
//   PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Device> gpu, cuda->create_device(0));
//
// Append-only: a new factory goes at the end (older hosts read a prefix and check
// `size` covers what they call); changing a signature bumps kCudaPluginAbiVersion and
// the entry point's name with it.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <memory>

namespace pshard {

class Device;         // runtime/device/device.h
class DeviceMeasurer; // runtime/profile/device_measurer.h

inline constexpr uint32_t kCudaPluginAbiVersion = 1;
inline constexpr const char* kCudaPluginEntryPoint = "pshard_cuda_plugin_v1";
inline constexpr const char* kCudaPluginFileName = "libpshard_cuda.so";

struct CudaPluginV1 {
  uint32_t abi_version; // kCudaPluginAbiVersion of the plugin's build
  uint32_t size;        // sizeof(CudaPluginV1) of the plugin's build
  const char* build_id; // kPluginBuildId of the plugin's build (plugin_build_id.h)
  // Ok when a CUDA device can be used; otherwise why not, e.g. "no CUDA device:
  // cudaGetDeviceCount returned 35 (CUDA driver version is insufficient ...)".
  Status (*probe)();
  // The GPU as a Device (runtime/backends/cuda/cuda_device.h); the transfer mode comes
  // from PSHARD_CUDA_TRANSFER.
  Result<std::unique_ptr<Device>> (*create_device)(int device_ordinal);
  // pshard-profile --backend cuda: the GPU's primitive timings.
  Result<std::unique_ptr<DeviceMeasurer>> (*create_measurer)(int device_ordinal);
};

// The entry point's type (the symbol is extern "C", named kCudaPluginEntryPoint).
using CudaPluginEntry = const CudaPluginV1* (*)();

} // namespace pshard
