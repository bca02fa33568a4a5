#include "runtime/backends/plugin/plugin_search.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>

namespace pshard {
namespace fs = std::filesystem;

namespace {

// The binary this function's code lies in: libpshard.so, or the executable when the
// loader is linked statically into a tool.
std::string loader_binary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&loader_binary), &info) == 0 || info.dli_fname == nullptr)
    return {};
  return info.dli_fname;
}

std::string executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.string();
}

} // namespace

std::vector<std::string> plugin_dirs_beside(const std::string& loader_binary,
                                            const std::string& executable) {
  std::vector<std::string> dirs;
  for (const std::string& binary : {loader_binary, executable}) {
    if (binary.empty())
      continue;
    std::error_code ec;
    const fs::path absolute = fs::absolute(binary, ec);
    if (ec)
      continue;
    const fs::path dir = absolute.parent_path().lexically_normal();
    for (const fs::path& d : {dir, (dir / ".." / "lib").lexically_normal()}) {
      std::string s = d.string();
      if (s.size() > 1 && s.back() == '/')
        s.pop_back();
      if (std::find(dirs.begin(), dirs.end(), s) == dirs.end())
        dirs.push_back(std::move(s));
    }
  }
  return dirs;
}

PluginSearch plugin_search_from_environment(const char* env_var) {
  PluginSearch s;
  if (const char* path = std::getenv(env_var); path != nullptr && path[0] != '\0') {
    // Absolute: dlopen would search the library path for a bare name instead.
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    s.explicit_path = ec ? std::string(path) : absolute.string();
    s.system_search = false;
    return s;
  }
  s.dirs = plugin_dirs_beside(loader_binary(), executable());
  return s;
}

std::vector<std::string> PluginSearch::paths(const std::string& file_name) const {
  if (!explicit_path.empty())
    return {explicit_path};
  std::vector<std::string> out;
  for (const std::string& d : dirs)
    out.push_back((fs::path(d) / file_name).string());
  return out;
}

std::string PluginSearch::describe(const std::string& env_var) const {
  if (!explicit_path.empty())
    return "$" + env_var + "=" + explicit_path;
  std::string out;
  for (const std::string& d : dirs)
    out += d + ", ";
  return out + (system_search ? "and the system library path (LD_LIBRARY_PATH, ld.so.cache)"
                              : "nowhere else");
}

} // namespace pshard
