// The CUDA plugin loader (runtime/backends/plugin): where it looks, what each failure
// says, the table checks — against stand-in plugins built like the real one
// (fake_plugin.cpp), and against libpshard_cuda.so itself where this build makes it.
#include "runtime/backends/plugin/cuda_plugin.h"
#include "runtime/backends/plugin/plugin_build_id.h"
#include "runtime/backends/plugin/plugin_errors.h"
#include "runtime/profile/device_measurer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <vector>

namespace pshard {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

PluginSearch only(const std::string& path) {
  PluginSearch s;
  s.explicit_path = path;
  s.system_search = false;
  return s;
}

// A fresh, empty temporary folder.
fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("cuda_plugin_loader_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(PluginSearch, LooksBesideTheLoaderThenTheExecutableWithoutRepeats) {
  const std::vector<std::string> dirs =
      plugin_dirs_beside("/opt/app/lib/libpshard.so", "/opt/app/bin/app");
  EXPECT_EQ(dirs, (std::vector<std::string>{"/opt/app/lib", "/opt/app/bin"}));
  // The loader linked into the executable: one folder and its ../lib.
  EXPECT_EQ(plugin_dirs_beside("/usr/bin/pshard-profile", "/usr/bin/pshard-profile"),
            (std::vector<std::string>{"/usr/bin", "/usr/lib"}));
  EXPECT_EQ(plugin_dirs_beside("", "/x/y/z"), (std::vector<std::string>{"/x/y", "/x/lib"}));
  // A relative path is made absolute.
  for (const std::string& d : plugin_dirs_beside("lib/libpshard.so", ""))
    EXPECT_TRUE(fs::path(d).is_absolute()) << d;
}

TEST(PluginSearch, AnExplicitPathIsTheOnlyCandidate) {
  PluginSearch s;
  s.dirs = {"/a", "/b"};
  EXPECT_EQ(s.paths("libx.so"), (std::vector<std::string>{"/a/libx.so", "/b/libx.so"}));
  EXPECT_TRUE(contains(s.describe("ENV"), "/a, /b, and the system library path"));
  s.explicit_path = "/c/libx.so";
  EXPECT_EQ(s.paths("libx.so"), (std::vector<std::string>{"/c/libx.so"}));
  EXPECT_EQ(s.describe("ENV"), "$ENV=/c/libx.so");
}

TEST(PluginSearch, FromTheEnvironmentOrBesideThisProgram) {
  const char* var = "PSHARD_TEST_PLUGIN_PATH";
  ASSERT_EQ(setenv(var, "rel/libx.so", 1), 0);
  PluginSearch s = plugin_search_from_environment(var);
  EXPECT_TRUE(fs::path(s.explicit_path).is_absolute()) << s.explicit_path;
  EXPECT_TRUE(s.explicit_path.ends_with("/rel/libx.so")) << s.explicit_path;
  EXPECT_FALSE(s.system_search);
  ASSERT_EQ(unsetenv(var), 0);
  s = plugin_search_from_environment(var);
  EXPECT_TRUE(s.explicit_path.empty());
  EXPECT_TRUE(s.system_search);
  // The loader is linked into this test, so its folder is the executable's.
  const std::string here = fs::read_symlink("/proc/self/exe").parent_path().string();
  ASSERT_FALSE(s.dirs.empty());
  EXPECT_EQ(s.dirs.front(), here);
}

TEST(PluginErrors, DlopenMessagesNameTheMissingLibrary) {
  EXPECT_EQ(library_missing_in("libcublasLt.so.13: cannot open shared object file: No such "
                               "file or directory"),
            "libcublasLt.so.13");
  EXPECT_EQ(library_missing_in("/opt/x/libpshard_cuda.so: cannot open shared object file: "
                               "No such file or directory"),
            "libpshard_cuda.so");
  EXPECT_EQ(library_missing_in("/x/libpshard_cuda.so: undefined symbol: cublasLtCreate"), "");
  EXPECT_TRUE(is_nvidia_library("libcublasLt.so.13"));
  EXPECT_TRUE(is_nvidia_library("libcuda.so.1"));
  EXPECT_FALSE(is_nvidia_library("libstdc++.so.6"));
}

TEST(PluginErrors, AMissingNvidiaLibrarySaysToInstallTheCudaRuntime) {
  const Status s = plugin_load_failed(
      "/opt/app/lib/libpshard_cuda.so",
      "libcublasLt.so.13: cannot open shared object file: No such file or directory");
  EXPECT_EQ(s.code(), StatusCode::kDeviceError);
  EXPECT_TRUE(contains(s.message(), "/opt/app/lib/libpshard_cuda.so needs libcublasLt.so.13"))
      << s.message();
  EXPECT_TRUE(contains(s.message(), "install the NVIDIA CUDA runtime / driver")) << s.message();
  EXPECT_TRUE(contains(s.message(), "--backend cpu and emu")) << s.message();
  // Not a library at all: the dlopen text, and what to do.
  const Status bad = plugin_load_failed("/x/libpshard_cuda.so", "/x/libpshard_cuda.so: file "
                                                                "too short");
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_TRUE(contains(bad.message(), "file too short")) << bad.message();
}

TEST(CudaPluginLoader, AMissingPluginNamesTheFileWhereItLookedAndWhatToDo) {
  const fs::path empty = temp_dir("empty");
  PluginSearch s;
  s.dirs = {empty.string()};
  s.system_search = false;
  const auto r = load_cuda_plugin(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  const std::string& m = r.status().message();
  EXPECT_TRUE(contains(m, "libpshard_cuda.so")) << m;
  EXPECT_TRUE(contains(m, empty.string())) << m;
  EXPECT_TRUE(contains(m, "CUDA toolkit") && contains(m, "PSHARD_CUDA_PLUGIN")) << m;

  const auto named = load_cuda_plugin(only((empty / "nowhere.so").string()));
  ASSERT_FALSE(named.ok());
  EXPECT_TRUE(
      contains(named.status().message(), "$PSHARD_CUDA_PLUGIN=" + (empty / "nowhere.so").string()))
      << named.status().message();
}

TEST(CudaPluginLoader, AGoodPluginsDeviceWorksAcrossTheBoundary) {
  const auto r = load_cuda_plugin(only(FAKE_PLUGIN_GOOD));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const CudaPluginV1* p = *r;
  EXPECT_STREQ(p->build_id, kPluginBuildId);
  EXPECT_TRUE(contains(p->probe().message(), "fake plugin")) << p->probe().message();
  auto measurer = p->create_measurer(0);
  EXPECT_FALSE(measurer.ok());
  // The plugin's own copies of the runtime libraries make the device; the host drives it
  // through the Device interface and destroys it.
  auto d = p->create_device(3);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  Device& dev = **d;
  EXPECT_EQ(dev.info().name, "emulated GPU 3 from a plugin");
  auto arena = dev.allocate_arena(1 << 20);
  ASSERT_TRUE(arena.ok()) << arena.status().to_string();
  std::vector<uint8_t> in(4096), out(4096, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<uint8_t>(i * 7 + 1);
  dev.copy_to_device(Queue::kCopy, *arena + 512, in.data(), in.size());
  auto copied = dev.create_event();
  ASSERT_TRUE(copied.ok());
  dev.record(**copied, Queue::kCopy);
  dev.wait(Queue::kTransfer, **copied);
  dev.copy_to_host(Queue::kTransfer, out.data(), *arena + 512, out.size());
  ASSERT_TRUE(dev.synchronize().ok());
  EXPECT_EQ(in, out);
  // Too much for its 16 MiB: the plugin's Status arrives intact.
  dev.free_arena();
  auto too_big = dev.allocate_arena(1ull << 30);
  EXPECT_EQ(too_big.status().code(), StatusCode::kOutOfMemory) << too_big.status().to_string();
  copied->reset();
  d->reset();
}

TEST(CudaPluginLoader, FindsThePluginInTheFirstSearchFolderHoldingIt) {
  const fs::path none = temp_dir("none"), some = temp_dir("some");
  fs::copy_file(FAKE_PLUGIN_GOOD, some / kCudaPluginFileName);
  PluginSearch s;
  s.dirs = {none.string(), some.string()};
  s.system_search = false;
  const auto r = load_cuda_plugin(s);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(contains((*r)->probe().message(), "fake plugin"));
}

TEST(CudaPluginLoader, APluginFromAnotherBuildOrVersionIsRefused) {
  struct Case {
    const char* path;
    const char* says;
  };
  for (const Case& c : {Case{FAKE_PLUGIN_OTHER_ABI, "plugin ABI version 99, this pshard reads "
                                                    "version 1"},
                        Case{FAKE_PLUGIN_OTHER_BUILD, "\"pshard 0.0.0 elsewhere\""},
                        Case{FAKE_PLUGIN_SMALL_TABLE, "its table has 16 bytes"},
                        Case{FAKE_PLUGIN_NO_ENTRY, "no entry point pshard_cuda_plugin_v1"}}) {
    const auto r = load_cuda_plugin(only(c.path));
    ASSERT_FALSE(r.ok()) << c.path;
    EXPECT_EQ(r.status().code(), StatusCode::kVersionMismatch) << r.status().to_string();
    EXPECT_TRUE(contains(r.status().message(), c.says)) << r.status().message();
    EXPECT_TRUE(contains(r.status().message(), c.path)) << r.status().message();
  }
  const auto other = load_cuda_plugin(only(FAKE_PLUGIN_OTHER_BUILD));
  EXPECT_TRUE(contains(other.status().message(), kPluginBuildId)) << other.status().message();
}

TEST(CudaPluginLoader, APluginWhoseLibrariesAreMissingNamesThem) {
  const auto r = load_cuda_plugin(only(FAKE_PLUGIN_NEEDS_ABSENT));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeviceError);
  EXPECT_TRUE(contains(r.status().message(), "needs libpshard_test_absent_dependency.so"))
      << r.status().message();
  EXPECT_TRUE(contains(r.status().message(), FAKE_PLUGIN_NEEDS_ABSENT)) << r.status().message();
}

TEST(CudaPluginLoader, NotAPluginAtAllIsAClearError) {
  const fs::path d = temp_dir("junk");
  const fs::path junk = d / kCudaPluginFileName;
  std::ofstream(junk) << "not an ELF file";
  const auto r = load_cuda_plugin(only(junk.string()));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.status().message(), junk.string())) << r.status().message();
}

#ifdef REAL_CUDA_PLUGIN
// libpshard_cuda.so of this build loads and matches; without a GPU it answers as the CUDA
// backend always has (the driver's reason), with one it makes the device.
TEST(CudaPluginLoader, TheRealPluginLoadsAndAnswersForTheGpu) {
  const auto r = load_cuda_plugin(only(REAL_CUDA_PLUGIN));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Status usable = (*r)->probe();
  auto d = (*r)->create_device(0);
  if (!usable.ok()) {
    EXPECT_TRUE(contains(usable.message(), "CUDA")) << usable.message();
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().message(), usable.message());
    return;
  }
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ((*d)->info().backend, "cuda");
}
#else
TEST(CudaPluginLoader, ABuildWithoutCudaSaysSoWithoutLooking) {
  const auto r = cuda_plugin();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.status().message(), "this build has no CUDA backend"))
      << r.status().message();
}
#endif

} // namespace
} // namespace pshard
