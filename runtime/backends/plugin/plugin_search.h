// Where the runtime looks for a plugin (libpshard_cuda.so), in order:
//
//   1. $PSHARD_CUDA_PLUGIN, a path to the file: when set, the only place looked at, so
//      a wrong path is an error rather than a silent fallback to another copy;
//   2. the folder of the binary holding the loader (libpshard.so for apps on the C API,
//      the executable for tools that link the runtime statically), and ../lib beside it;
//   3. the folder of the executable (/proc/self/exe), and ../lib beside it — an app that
//      ships the plugin next to itself;
//   4. dlopen's own search by file name: LD_LIBRARY_PATH, the caller's RUNPATH, the
//      ld.so cache, /lib and /usr/lib.
//
// An installed pshard (lib/libpshard.so, lib/libpshard_cuda.so, bin/pshard-*) is found by
// 2 or 3; a build tree by the plugin lying next to libpshard.so and the tools' RUNPATH.
//
//   PluginSearch s = plugin_search_from_environment("PSHARD_CUDA_PLUGIN");
//   for (const std::string& path : s.paths(kCudaPluginFileName)) ...   // 1–3
//   if (s.system_search) dlopen(kCudaPluginFileName, ...);              // 4
#pragma once

#include <string>
#include <vector>

namespace pshard {

struct PluginSearch {
  std::string explicit_path;     // from the environment; set: the only candidate
  std::vector<std::string> dirs; // 2 and 3, absolute, without repeats
  bool system_search = true;     // 4: false when explicit_path is set

  // The files to try, in order (explicit_path alone, or `file_name` in each of dirs).
  std::vector<std::string> paths(const std::string& file_name) const;
  // "$PSHARD_CUDA_PLUGIN=/x" or "/a, /b and the system library path", for messages.
  std::string describe(const std::string& env_var) const;
};

// The search as this process is: `env_var`'s value, the loader's binary, the executable.
PluginSearch plugin_search_from_environment(const char* env_var);

// Folders for step 2 and 3 given the two binaries' paths (either may be empty): each one's
// folder and ../lib beside it, made absolute, repeats dropped.
std::vector<std::string> plugin_dirs_beside(const std::string& loader_binary,
                                            const std::string& executable);

} // namespace pshard
