// llama.cpp's own K-quant bytes: every tensor of the shared stories260K-x4 Q4_K_M and
// Q6_K files (written by llama-quantize from stories260K-x4-F32) dequantizes close to
// the F32 tensor it came from, and matmul on them agrees with the float64 reading.
// A misread field of any layout llama.cpp wrote would show up here at once.
#include "block_reference.h"
#include "kernel_test_util.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/kernels/matmul.h"
#include "runtime/kernels/quantize.h"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

namespace pshard {
namespace {

std::string shared_model(const std::string& file) {
  return std::string(PSHARD_SHARED_DIR) + "/models/" + file;
}

void expect_close_to_source(const std::string& file, TensorType main_type, double max_rel_rms) {
  const std::string path = shared_model(file), source = shared_model("stories260K-x4-F32.gguf");
  if (!std::filesystem::exists(path) || !std::filesystem::exists(source))
    GTEST_SKIP() << path << " or " << source << " is not present";
  auto q = gguf::GgufFile::open(path);
  auto f = gguf::GgufFile::open(source);
  ASSERT_TRUE(q.ok() && f.ok());
  int of_main_type = 0;
  for (const gguf::TensorInfo& t : (*q)->tensors()) {
    SCOPED_TRACE(t.name + " " + tensor_type_name(t.type));
    const gguf::TensorInfo* src = (*f)->find_tensor(t.name);
    ASSERT_NE(src, nullptr);
    ASSERT_EQ(src->type, TensorType::kF32);
    ASSERT_EQ(src->dims, t.dims);
    const int64_t n = t.n_values();
    std::vector<float> got(n);
    dequantize_row(t.type, (*q)->tensor_data(t), got.data(), n);
    const float* want = reinterpret_cast<const float*>((*f)->tensor_data(*src));
    double err = 0, energy = 0;
    for (int64_t i = 0; i < n; ++i) {
      err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      energy += double(want[i]) * want[i];
    }
    const double bound = t.type == TensorType::kF32    ? 0
                         : t.type == TensorType::kQ6_K ? 0.03
                                                       : max_rel_rms;
    EXPECT_LE(std::sqrt(err / std::max(energy, 1e-30)), bound);
    of_main_type += t.type == main_type;
  }
  EXPECT_GT(of_main_type, 0);
}

TEST(LlamaCppKQuants, Q4KMTensorsDecodeToTheirSource) {
  expect_close_to_source("stories260K-x4-Q4_K_M.gguf", TensorType::kQ4_K, 0.1);
}

TEST(LlamaCppKQuants, Q6KTensorsDecodeToTheirSource) {
  expect_close_to_source("stories260K-x4-Q6_K.gguf", TensorType::kQ6_K, 0.03);
}

// The real rows through matmul (the active ISA) against the float64 reading.
TEST(LlamaCppKQuants, MatmulOnRealRowsMatchesTheReference) {
  const std::string path = shared_model("stories260K-x4-Q4_K_M.gguf");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is not present";
  auto q = gguf::GgufFile::open(path);
  ASSERT_TRUE(q.ok());
  ThreadPool pool(2);
  for (const char* name : {"blk.2.attn_v.weight", "blk.0.ffn_down.weight", "blk.1.ffn_up.weight"}) {
    SCOPED_TRACE(name);
    const gguf::TensorInfo* t = (*q)->find_tensor(name);
    ASSERT_NE(t, nullptr);
    const int64_t cols = t->row_length(), rows = t->n_rows();
    const size_t row_bytes = tensor_bytes(t->type, cols).value();
    const std::vector<float> x = test::random_floats(cols, 3);
    std::vector<float> y(rows);
    matmul({t->type, (*q)->tensor_data(*t), rows, cols, row_bytes}, x.data(), 1, y.data(), pool);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> w(cols);
      dequantize_row(t->type, (*q)->tensor_data(*t) + r * row_bytes, w.data(), cols);
      double exact = 0, abs_sum = 0;
      for (int64_t i = 0; i < cols; ++i) {
        exact += double(w[i]) * x[i];
        abs_sum += std::fabs(double(w[i]) * x[i]);
      }
      // 8-bit activations per 256 values: well under 2% of sum |w x|.
      ASSERT_NEAR(y[r], exact, 0.02 * abs_sum) << "row " << r;
    }
  }
}

} // namespace
} // namespace pshard
