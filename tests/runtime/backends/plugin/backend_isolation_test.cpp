// Through the C API as an app uses it: contexts on cpu and emu never load the CUDA
// plugin or any NVIDIA library (the process's mappings say so), and a cuda context with
// the plugin hidden fails naming what is missing — while cpu keeps working.
#include "pshard/pshard.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace {

const std::string kModel = std::string(PSHARD_SHARED_DIR) + "/models/stories260K.gguf";

// The shared objects mapped into this process whose path contains `part`.
std::string mapped(const std::string& part) {
  std::ifstream maps("/proc/self/maps");
  std::string line, found;
  while (std::getline(maps, line))
    if (line.find(part) != std::string::npos)
      found += line.substr(line.find('/') == std::string::npos ? 0 : line.find('/')) + "\n";
  return found;
}

// Greedy tokens after "Once upon a time" on `backend`, or the error.
std::string generate(pshard_model* m, pshard_backend backend, int n_predict) {
  pshard_context_params cp = pshard_context_default_params();
  cp.backend = backend;
  cp.n_threads = 1;
  pshard_context* ctx = nullptr;
  if (pshard_context_create(m, &cp, &ctx) != PSHARD_OK)
    return std::string("error: ") + pshard_last_error();
  pshard_token prompt[16];
  size_t n = 0;
  EXPECT_EQ(pshard_model_tokenize(m, "Once upon a time", 16, true, prompt, 16, &n), PSHARD_OK);
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = n_predict;
  gp.temperature = 0;
  std::string tokens;
  auto on_token = [](const pshard_token_event* e, void* user) {
    if (e->token >= 0)
      *static_cast<std::string*>(user) += std::to_string(e->token) + " ";
    return true;
  };
  const pshard_status s = pshard_context_generate(ctx, prompt, n, &gp, on_token, &tokens, nullptr);
  pshard_context_free(ctx);
  return s == PSHARD_OK ? tokens : std::string("error: ") + pshard_last_error();
}

// One test: the plugin is looked for once per process, so the order of these steps is
// the point (cpu and emu first, then cuda with the plugin hidden).
TEST(BackendIsolation, CpuAndEmuNeverLoadCudaAndAHiddenPluginIsNamed) {
  if (!std::filesystem::exists(kModel))
    GTEST_SKIP() << "shared model " << kModel << " is not present";
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK) << pshard_last_error();
  const std::string on_cpu = generate(m, PSHARD_BACKEND_CPU, 8);
  ASSERT_EQ(on_cpu.rfind("error", 0), std::string::npos) << on_cpu;
  EXPECT_EQ(on_cpu, "432 383 286 261 376 298 315 421 "); // stories260K's known answer
  EXPECT_EQ(generate(m, PSHARD_BACKEND_EMU, 8), on_cpu);
  EXPECT_EQ(mapped("libpshard_cuda"), "");
  EXPECT_EQ(mapped("libcublas"), "");
  EXPECT_EQ(mapped("libcudart"), "");

  const std::string hidden = ::testing::TempDir() + "/no-such-dir/libpshard_cuda.so";
  ASSERT_EQ(setenv("PSHARD_CUDA_PLUGIN", hidden.c_str(), 1), 0);
  const std::string on_cuda = generate(m, PSHARD_BACKEND_CUDA, 8);
  EXPECT_EQ(on_cuda.rfind("error", 0), 0u) << on_cuda;
#ifdef PSHARD_TEST_HAVE_CUDA_PLUGIN
  EXPECT_NE(on_cuda.find("$PSHARD_CUDA_PLUGIN=" + hidden), std::string::npos) << on_cuda;
  EXPECT_NE(on_cuda.find("does not exist"), std::string::npos) << on_cuda;
#else
  EXPECT_NE(on_cuda.find("this build has no CUDA backend"), std::string::npos) << on_cuda;
#endif
  EXPECT_EQ(mapped("libcublas"), "");
  EXPECT_EQ(generate(m, PSHARD_BACKEND_CPU, 8), on_cpu); // the failure left nothing behind
  unsetenv("PSHARD_CUDA_PLUGIN");
  pshard_model_free(m);
}

} // namespace
