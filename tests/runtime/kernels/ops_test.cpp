// The scalar ops against float64 references.
#include "kernel_test_util.h"
#include "runtime/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace pshard {
namespace {

TEST(RmsNorm, MatchesFloat64AndMayAlias) {
  for (int64_t n : {1, 7, 4096}) {
    const std::vector<float> x = test::random_floats(n, 1, 2.0f);
    const std::vector<float> w = test::random_floats(n, 2);
    double sum_sq = 0;
    for (float v : x)
      sum_sq += double(v) * v;
    const double scale = 1 / std::sqrt(sum_sq / n + 1e-5);
    std::vector<float> y(n), in_place = x;
    rms_norm(x.data(), w.data(), y.data(), n, 1e-5f);
    rms_norm(in_place.data(), w.data(), in_place.data(), n, 1e-5f);
    for (int64_t i = 0; i < n; ++i) {
      const double want = x[i] * scale * w[i];
      EXPECT_NEAR(y[i], want, 2e-6 * std::fabs(want) + 1e-30) << "n=" << n << " i=" << i;
      EXPECT_EQ(in_place[i], y[i]);
    }
  }
}

// Reference: the angle exactly as ops.h defines it (computed in float, as the
// kernel and llama.cpp do), the rotation in float64.
void reference_rope(std::vector<double> &v, int64_t n_heads, int64_t pos, const RopeParams &p) {
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < p.rot_dim / 2; ++i) {
      float theta = static_cast<float>(pos) * p.freq_scale *
                    std::pow(p.freq_base, -2.0f * static_cast<float>(i) / p.rot_dim);
      if (p.freq_factors)
        theta /= p.freq_factors[i];
      double &x0 = v[h * p.head_dim + 2 * i];
      double &x1 = v[h * p.head_dim + 2 * i + 1];
      const double a = x0, b = x1, c = std::cos(double(theta)), s = std::sin(double(theta));
      x0 = a * c - b * s;
      x1 = a * s + b * c;
    }
}

TEST(Rope, MatchesFloat64WithPartialRotationAndFreqFactors) {
  const int64_t n_heads = 3, head_dim = 64;
  std::vector<float> factors(32);
  for (size_t i = 0; i < factors.size(); ++i)
    factors[i] = 1.0f + static_cast<float>(i) * 0.25f;
  struct Setup {
    int64_t rot_dim;
    float base, scale;
    const float *freq_factors;
  };
  const Setup setups[] = {{64, 10000.0f, 1.0f, nullptr},
                          {64, 500000.0f, 0.25f, factors.data()},
                          {32, 10000.0f, 1.0f, nullptr}};
  for (const Setup &s : setups)
    for (int64_t pos : {0, 1, 17, 4000}) {
      RopeParams p;
      p.head_dim = head_dim;
      p.rot_dim = s.rot_dim;
      p.freq_base = s.base;
      p.freq_scale = s.scale;
      p.freq_factors = s.freq_factors;
      const std::vector<float> in = test::random_floats(n_heads * head_dim, 4);
      std::vector<float> v = in;
      std::vector<double> ref(in.begin(), in.end());
      rope(v.data(), n_heads, pos, p);
      reference_rope(ref, n_heads, pos, p);
      for (int64_t h = 0; h < n_heads; ++h)
        for (int64_t d = 0; d < head_dim; ++d) {
          const int64_t i = h * head_dim + d;
          if (d >= s.rot_dim || pos == 0) // untouched: bit-exact
            ASSERT_EQ(v[i], in[i]) << "rot_dim=" << s.rot_dim << " pos=" << pos << " i=" << i;
          else
            ASSERT_NEAR(v[i], ref[i], 1e-6 * (std::fabs(in[i & ~1]) + std::fabs(in[i | 1])))
                << "rot_dim=" << s.rot_dim << " pos=" << pos << " i=" << i;
        }
    }
}

// M-RoPE (Qwen2-VL): with all three positions equal it is NeoX RoPE bit for bit (text
// tokens); with distinct ones, pair i rotates by the position of its section.
TEST(Rope, MultimodalSectionsCollapseToNeoxAndPickTheirPosition) {
  const int64_t n_heads = 2, head_dim = 32;
  RopeParams p;
  p.head_dim = head_dim;
  p.rot_dim = head_dim;
  p.neox = true;
  p.freq_base = 1000000.0f;
  p.sections[0] = 4;
  p.sections[1] = 6;
  p.sections[2] = 6;
  const std::vector<float> in = test::random_floats(n_heads * head_dim, 9);
  for (int64_t pos : {0, 3, 1234}) {
    std::vector<float> plain = in, multi = in;
    RopeParams neox = p;
    neox.sections[0] = neox.sections[1] = neox.sections[2] = 0;
    rope(plain.data(), n_heads, pos, neox);
    const int64_t same[3] = {pos, pos, pos};
    rope_multi(multi.data(), n_heads, same, p);
    ASSERT_EQ(plain, multi) << "pos=" << pos;
  }
  const int64_t pos[3] = {5, 70, 900};
  std::vector<float> v = in;
  rope_multi(v.data(), n_heads, pos, p);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    const int64_t section = i < 4 ? 0 : i < 10 ? 1 : 2;
    // The pair alone, rotated by its section's position as plain NeoX RoPE would.
    std::vector<float> one = in;
    RopeParams neox = p;
    neox.sections[0] = neox.sections[1] = neox.sections[2] = 0;
    rope(one.data(), n_heads, pos[section], neox);
    for (int64_t h = 0; h < n_heads; ++h)
      for (int64_t d : {i, i + head_dim / 2})
        ASSERT_EQ(v[h * head_dim + d], one[h * head_dim + d]) << "pair " << i << " head " << h;
  }
}

TEST(Softmax, SumsToOneAndMatchesFloat64) {
  for (float spread : {1.0f, 30.0f}) {
    std::vector<float> x = test::random_floats(1001, 6, spread);
    x[10] = 1000.0f;   // would overflow without subtracting the max
    x[11] = -INFINITY; // a masked entry
    double max = -INFINITY, sum = 0;
    for (float v : x)
      max = std::max(max, double(v));
    for (float v : x)
      sum += std::exp(double(v) - max);
    std::vector<float> y = x;
    softmax(y.data(), static_cast<int64_t>(y.size()));
    double total = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const double want = std::exp(double(x[i]) - max) / sum;
      EXPECT_NEAR(y[i], want, 1e-6 * want + 1e-30) << i;
      total += y[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
    EXPECT_EQ(y[11], 0.0f);
  }
  std::vector<float> masked = {-INFINITY, -INFINITY};
  softmax(masked.data(), 2);
  EXPECT_EQ(masked[0], 0.0f);
  float one = 3.0f;
  softmax(&one, 1);
  EXPECT_EQ(one, 1.0f);
}

TEST(SiluMul, MatchesFloat64) {
  const std::vector<float> gate = test::random_floats(1001, 7, 4.0f);
  const std::vector<float> up = test::random_floats(1001, 8);
  std::vector<float> out(1001);
  silu_mul(gate.data(), up.data(), out.data(), 1001);
  for (size_t i = 0; i < out.size(); ++i) {
    const double g = gate[i], want = g / (1 + std::exp(-g)) * up[i];
    EXPECT_NEAR(out[i], want, 1e-6 * std::fabs(want) + 1e-30) << i;
  }
  const float big[2] = {-100.0f, 100.0f}, ones[2] = {1.0f, 1.0f};
  float res[2];
  silu_mul(big, ones, res, 2);
  EXPECT_NEAR(res[0], 0.0f, 1e-30f);
  EXPECT_EQ(res[1], 100.0f);
}

// gpt-oss's clamped SwiGLU against OpenAI's formula in float64, over gates and ups on
// both sides of the ±7 clamp (where the unclamped values would differ by far more).
TEST(SwigluOai, MatchesFloat64AndClampsAtSeven) {
  const std::vector<float> g = {-20.0f, -7.5f, -7.0f, -1.0f, 0.0f, 0.3f, 6.9f, 7.0f, 7.1f, 30.0f};
  const std::vector<float> u = {-30.0f, -7.0f, 7.5f, 2.0f, 1.0f, -0.4f, 8.0f, -9.0f, 0.5f, 3.0f};
  std::vector<float> out(g.size());
  swiglu_oai(g.data(), u.data(), out.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = std::min(double(g[i]), 7.0), y = std::clamp(double(u[i]), -7.0, 7.0);
    const double want = x / (1 + std::exp(-1.702 * x)) * (y + 1);
    EXPECT_NEAR(out[i], want, 1e-5 * std::fabs(want) + 1e-6) << "i=" << i;
  }
  // Past the clamp the output no longer moves: 7.1 and 30 gate alike, up 8 is up 7.
  EXPECT_NEAR(out[8] / (0.5f + 1.0f), out[9] / (3.0f + 1.0f), 1e-6 * std::fabs(out[9]));
  const float at7[2] = {7.0f, 7.0f}, up[2] = {7.0f, 8.0f};
  float clamped[2];
  swiglu_oai(at7, up, clamped, 2);
  EXPECT_EQ(clamped[0], clamped[1]);
}

TEST(AddInplace, AddsElementwise) {
  std::vector<float> y = {1, 2, 3}, x = {0.5f, -2, 4};
  add_inplace(y.data(), x.data(), 3);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 0, 7}));
}

} // namespace
} // namespace pshard
