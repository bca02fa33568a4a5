#include "runtime/backends/plugin/cuda_plugin.h"

#include "runtime/backends/plugin/plugin_build_id.h"
#include "runtime/backends/plugin/plugin_errors.h"

#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <link.h>

namespace pshard {
namespace {

// The file a handle was loaded from (a bare-name dlopen found it somewhere on the path).
std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0')
    return map->l_name;
  return fallback;
}

// dlopens `file` (a path, or a bare name for the system search) and checks its table.
// A rejected plugin is closed again; an accepted one never is (cuda_plugin.h).
Result<const CudaPluginV1*> open_plugin(const std::string& file, const PluginSearch& search) {
  // RTLD_LOCAL: the plugin's symbols stay its own. RTLD_NOW: a missing symbol fails
  // here, with a message, instead of at the first call into it.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    const std::string error = e ? e : "unknown dlopen error";
    const bool by_name = file.find('/') == std::string::npos;
    if (by_name && library_missing_in(error) == file)
      return plugin_not_found(search, kCudaPluginEnvVar, kCudaPluginFileName);
    return plugin_load_failed(by_name ? file + " (found on the library path)" : file, error);
  }
  const std::string path = loaded_path(handle, file);
  auto entry = reinterpret_cast<CudaPluginEntry>(dlsym(handle, kCudaPluginEntryPoint));
  Result<const CudaPluginV1*> table =
      entry == nullptr ? Result<const CudaPluginV1*>(plugin_mismatch(
                             path, std::string("it has no entry point ") + kCudaPluginEntryPoint +
                                       ": not a pshard CUDA plugin, or one of another ABI version"))
                       : check_cuda_plugin_table(entry(), path);
  if (!table.ok())
    dlclose(handle);
  return table;
}

} // namespace

Result<const CudaPluginV1*> check_cuda_plugin_table(const CudaPluginV1* t,
                                                    const std::string& where) {
  if (t == nullptr)
    return plugin_mismatch(where, std::string(kCudaPluginEntryPoint) + " returned no table");
  if (t->abi_version != kCudaPluginAbiVersion)
    return plugin_mismatch(where, "plugin ABI version " + std::to_string(t->abi_version) +
                                      ", this pshard reads version " +
                                      std::to_string(kCudaPluginAbiVersion));
  if (t->size < sizeof(CudaPluginV1))
    return plugin_mismatch(where, "its table has " + std::to_string(t->size) +
                                      " bytes, this pshard needs " +
                                      std::to_string(sizeof(CudaPluginV1)));
  if (t->build_id == nullptr || std::strcmp(t->build_id, kPluginBuildId) != 0)
    return plugin_mismatch(where, std::string("plugin built by \"") +
                                      (t->build_id ? t->build_id : "?") + "\", this pshard by \"" +
                                      kPluginBuildId + "\"");
  if (t->probe == nullptr || t->create_device == nullptr || t->create_measurer == nullptr)
    return plugin_mismatch(where, "its table lacks a factory");
  return t;
}

Result<const CudaPluginV1*> load_cuda_plugin(const PluginSearch& search) {
  for (const std::string& path : search.paths(kCudaPluginFileName)) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec))
      return open_plugin(path, search); // the first one found is the one that counts
  }
  if (search.system_search)
    return open_plugin(kCudaPluginFileName, search);
  return plugin_not_found(search, kCudaPluginEnvVar, kCudaPluginFileName);
}

Result<const CudaPluginV1*> cuda_plugin() {
  static const Result<const CudaPluginV1*> loaded = []() -> Result<const CudaPluginV1*> {
#ifdef PSHARD_HAVE_CUDA_PLUGIN
    return load_cuda_plugin(plugin_search_from_environment(kCudaPluginEnvVar));
#else
    return unsupported("this build has no CUDA backend (configure it with the CUDA toolkit "
                       "installed, see docs/cuda.md); use --backend emu or cpu");
#endif
  }();
  return loaded;
}

Result<std::unique_ptr<Device>> create_cuda_device(int device_ordinal) {
  PSHARD_ASSIGN_OR_RETURN(const CudaPluginV1* cuda, cuda_plugin());
  return cuda->create_device(device_ordinal);
}

} // namespace pshard
