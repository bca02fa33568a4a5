// The vectorised ops (RMSNorm, softmax, SiLU, one-head attention) on every ISA
// path this CPU has, against float64 references; paths it lacks are skipped.
#include "kernel_test_util.h"
#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/kernels/ops.h"

#include <cmath>
#include <gtest/gtest.h>

namespace pshard {
namespace {

using kernels::Isa;

class OpsOnIsa : public testing::TestWithParam<Isa> {
protected:
  void SetUp() override {
    if (!kernels::force_isa(GetParam()))
      GTEST_SKIP() << "this CPU lacks the " << kernels::isa_name(GetParam()) << " path";
  }
  void TearDown() override { kernels::force_isa(kernels::detected_isa()); }
};

TEST_P(OpsOnIsa, SoftmaxAndSiluOnOddLengths) {
  for (int64_t n : {1, 5, 16, 17, 33, 1001}) {
    std::vector<float> x = test::random_floats(n, 11, 20.0f);
    double max = -INFINITY, sum = 0;
    for (float v : x)
      max = std::max(max, double(v));
    for (float v : x)
      sum += std::exp(double(v) - max);
    std::vector<float> y = x;
    softmax(y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(double(x[i]) - max) / sum;
      // x - max rounds in float: half an ulp of a difference d is d * 2^-24 of e^d.
      const double rel = 2e-6 + std::fabs(double(x[i]) - max) * 0x1p-24;
      ASSERT_NEAR(y[i], want, rel * want + 1e-30) << "n=" << n << " i=" << i;
    }
    const std::vector<float> up = test::random_floats(n, 12);
    std::vector<float> out(n);
    silu_mul(x.data(), up.data(), out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double g = x[i], want = g / (1 + std::exp(-g)) * up[i];
      ASSERT_NEAR(out[i], want, 2e-6 * std::fabs(want) + 1e-30) << "n=" << n << " i=" << i;
    }
  }
}

TEST_P(OpsOnIsa, RmsNormOnOddLengths) {
  for (int64_t n : {1, 7, 17, 2048, 2049}) {
    const std::vector<float> x = test::random_floats(n, 1, 2.0f);
    const std::vector<float> w = test::random_floats(n, 2);
    double sum_sq = 0;
    for (float v : x)
      sum_sq += double(v) * v;
    const double scale = 1 / std::sqrt(sum_sq / n + 1e-5);
    std::vector<float> y(n);
    rms_norm(x.data(), w.data(), y.data(), n, 1e-5f);
    for (int64_t i = 0; i < n; ++i) {
      const double want = x[i] * scale * w[i];
      ASSERT_NEAR(y[i], want, 3e-6 * std::fabs(want) + 1e-30) << "n=" << n << " i=" << i;
    }
  }
}

TEST_P(OpsOnIsa, AttendHeadMatchesFloat64) {
  for (int64_t head_dim : {64, 128, 12, 80})
    for (int64_t n_kv : {1, 3, 40}) {
      const int64_t stride = head_dim * 3 + 4; // rows of a wider cache
      const std::vector<float> q = test::random_floats(head_dim, 1);
      const std::vector<float> k = test::random_floats(n_kv * stride, 2);
      const std::vector<float> v = test::random_floats(n_kv * stride, 3);
      std::vector<float> out(head_dim, -1.0f), scores(n_kv);
      const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      attend_head({q.data(), k.data(), v.data(), stride, n_kv, head_dim, scale, out.data(),
                   scores.data()});
      std::vector<double> s(n_kv);
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n_kv; ++j) {
        for (int64_t i = 0; i < head_dim; ++i)
          s[j] += double(q[i]) * k[j * stride + i];
        s[j] *= scale;
        max = std::max(max, s[j]);
      }
      for (double& x : s)
        sum += (x = std::exp(x - max));
      for (int64_t i = 0; i < head_dim; ++i) {
        double want = 0, abs = 0;
        for (int64_t j = 0; j < n_kv; ++j) {
          want += s[j] / sum * v[j * stride + i];
          abs += s[j] / sum * std::fabs(v[j * stride + i]);
        }
        ASSERT_NEAR(out[i], want, 1e-5 * abs + 1e-30)
            << "head_dim=" << head_dim << " n_kv=" << n_kv << " i=" << i;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Paths, OpsOnIsa, testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512),
                         [](const testing::TestParamInfo<Isa>& i) {
                           return std::string(kernels::isa_name(i.param));
                         });

} // namespace
} // namespace pshard
