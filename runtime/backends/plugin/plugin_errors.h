// The loader's failures as statuses that say what is missing and what to do about it.
// Each case is one function so the loader reads as a list of outcomes and tests can
// check the wording without a broken machine.
//
//   missing plugin             -> kUnsupported: the file name, where it looked, how to get it
//   plugin found, a library it -> kDeviceError: that library, "install the NVIDIA CUDA
//   needs missing                 runtime / driver" for NVIDIA's, the dlopen text otherwise
//   plugin from another build  -> kVersionMismatch: both build ids
//
//   std::string lib = library_missing_in(dlerror());   // "libcublasLt.so.13" or ""
#pragma once

#include "runtime/backends/plugin/plugin_search.h"
#include "runtime/core/status.h"

#include <string>
#include <string_view>

namespace pshard {

// The library a dlopen message says it could not find ("libcublasLt.so.13: cannot open
// shared object file: No such file or directory" -> "libcublasLt.so.13"); "" when the
// message is about something else (a bad ELF file, an undefined symbol).
std::string library_missing_in(std::string_view dlopen_error);

// True for NVIDIA's libraries (the driver's libcuda, cuBLAS/cuBLASLt, the CUDA runtime...).
bool is_nvidia_library(std::string_view file_name);

// The plugin file exists nowhere in `search`.
Status plugin_not_found(const PluginSearch& search, const char* env_var, const char* file_name);

// dlopen of the plugin at `path` failed with `dlopen_error` (a library it needs is
// missing, or the file is not a loadable plugin).
Status plugin_load_failed(const std::string& path, const std::string& dlopen_error);

// The plugin loaded but is not one this build can use (`why`: no entry point, another
// ABI version, a smaller table, another build).
Status plugin_mismatch(const std::string& path, const std::string& why);

} // namespace pshard
