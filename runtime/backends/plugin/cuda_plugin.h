// Loading the CUDA backend's plugin (libpshard_cuda.so) on demand.
//
// Nothing outside the plugin links the CUDA runtime or cuBLASLt: libpshard and the tools
// call these functions only when asked for the cuda backend (pshard_context_create with
// PSHARD_BACKEND_CUDA, pshard-profile --backend cuda/auto), so cpu and emu never dlopen
// anything and a build with CUDA runs everywhere. Where the plugin is looked for:
// plugin_search.h; what each failure says: plugin_errors.h; the table: cuda_plugin_api.h.
//
//   PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Device> gpu, create_cuda_device());
//   // or, for more than a Device:
//   PSHARD_ASSIGN_OR_RETURN(const CudaPluginV1* cuda, cuda_plugin());
//   PSHARD_ASSIGN_OR_RETURN(auto measurer, cuda->create_measurer(0));
//
// A loaded plugin stays loaded for the life of the process: the objects it made run its
// code, and the CUDA runtime inside it tears down at exit.
#pragma once

#include "runtime/backends/plugin/cuda_plugin_api.h"
#include "runtime/backends/plugin/plugin_search.h"
#include "runtime/core/status.h"
#include "runtime/device/device.h"

#include <memory>

namespace pshard {

// The environment variable naming the plugin's path (plugin_search.h, step 1).
inline constexpr const char* kCudaPluginEnvVar = "PSHARD_CUDA_PLUGIN";

// The plugin of this process, found by plugin_search_from_environment on the first call;
// that call's outcome (the table, or why there is none) is kept and returned by later
// ones. In a build without the CUDA toolkit it says so without looking.
Result<const CudaPluginV1*> cuda_plugin();

// The GPU `device_ordinal` through cuda_plugin(): the plugin's error when it cannot be
// loaded, the driver's (no driver, no device) when it loads but finds no GPU.
Result<std::unique_ptr<Device>> create_cuda_device(int device_ordinal = 0);

// Loads and checks the plugin from `search` (uncached: tests, other search orders).
Result<const CudaPluginV1*> load_cuda_plugin(const PluginSearch& search);

// Checks a loaded plugin's table against this build: entry point, ABI version, size,
// build id. `where` names the plugin in errors.
Result<const CudaPluginV1*> check_cuda_plugin_table(const CudaPluginV1* table,
                                                    const std::string& where);

} // namespace pshard
