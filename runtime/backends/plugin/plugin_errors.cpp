#include "runtime/backends/plugin/plugin_errors.h"

#include <array>

namespace pshard {
namespace {

constexpr std::string_view kCannotOpen = ": cannot open shared object file";
constexpr const char* kOtherBackends =
    "; --backend cpu and emu need no plugin and no NVIDIA library";

} // namespace

std::string library_missing_in(std::string_view dlopen_error) {
  const size_t end = dlopen_error.find(kCannotOpen);
  if (end == std::string_view::npos)
    return {};
  // The name is the last path component before the marker ("/a/b/libx.so: cannot ...").
  std::string_view name = dlopen_error.substr(0, end);
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name.remove_prefix(slash + 1);
  return std::string(name);
}

bool is_nvidia_library(std::string_view file_name) {
  static constexpr std::array<std::string_view, 6> kPrefixes = {
      "libcuda", "libcublas", "libnvidia", "libnvrtc", "libnvJitLink", "libcusparse"};
  for (std::string_view p : kPrefixes)
    if (file_name.substr(0, p.size()) == p)
      return true;
  return false;
}

Status plugin_not_found(const PluginSearch& search, const char* env_var, const char* file_name) {
  const std::string where = search.describe(env_var);
  const std::string name = file_name, env = env_var;
  if (!search.explicit_path.empty())
    return unsupported("the cuda backend's plugin was not found: " + where + " does not exist. " +
                       "Point " + env + " at the " + name + " built with this pshard (it lies " +
                       "next to libpshard.so), or unset it to search the default places" +
                       kOtherBackends);
  return unsupported("the cuda backend is a plugin, " + name + ", and it was not found (looked " +
                     "in " + where + "). Build pshard with the CUDA toolkit installed " +
                     "(docs/cuda.md) and install " + name + " next to libpshard.so or the " +
                     "program (or in ../lib beside it), or set " + env + " to its path" +
                     kOtherBackends);
}

Status plugin_load_failed(const std::string& path, const std::string& dlopen_error) {
  const std::string library = library_missing_in(dlopen_error);
  if (library.empty())
    return io_error("the cuda backend's plugin " + path + " could not be loaded (" + dlopen_error +
                    "): reinstall it from the build that made this pshard" + kOtherBackends);
  if (path.find(library) != std::string::npos) // the plugin's own file, e.g. unreadable
    return io_error("the cuda backend's plugin " + path + " could not be opened (" + dlopen_error +
                    ")" + kOtherBackends);
  const std::string head =
      "the cuda backend's plugin " + path + " needs " + library + ", which this machine lacks";
  if (is_nvidia_library(library))
    return Status(StatusCode::kDeviceError,
                  head + ": install the NVIDIA CUDA runtime / driver (" + library +
                      " comes with the CUDA toolkit or NVIDIA's redistributable CUDA "
                      "libraries; put it on the library path or next to the plugin)" +
                      kOtherBackends);
  return Status(StatusCode::kDeviceError, head + " (" + dlopen_error + ")" + kOtherBackends);
}

Status plugin_mismatch(const std::string& path, const std::string& why) {
  return Status(StatusCode::kVersionMismatch,
                "the cuda backend's plugin " + path + " is not from this pshard's build (" + why +
                    "): use the plugin built together with this pshard" + kOtherBackends);
}

} // namespace pshard
