// The windows (and value widths) of attention on the CPU (and so the emulated GPU, which runs the
// same code) against a float64 evaluation with an explicit mask: a causal window sees the last
// `window` positions, its own included; a model attending both ways (gemma-embedding)
// sees the positions within window / 2 of the query on either side, clipped to the
// text — later positions too, where a causal window sees none; a chunked one (Llama 4) its
// chunk so far.
#include "runtime/backends/cpu/cpu_ops.h"
#include "tests/runtime/kernels/kernel_test_util.h"

#include <cmath>
#include <gtest/gtest.h>

namespace pshard {
namespace {

// out[t] for query t over keys j with visible(t, j), in float64 (values value_dim() wide).
template <typename Visible>
std::vector<double> masked_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, const AttentionDims& d, int64_t n,
                                     Visible visible) {
  const int64_t hd = d.head_dim, hv = d.value_dim(), group = d.n_head / d.n_head_kv;
  const int64_t q_dim = d.n_head * hd, kv_dim = d.n_head_kv * hd, v_dim = d.n_head_kv * hv;
  std::vector<double> out(static_cast<size_t>(n * d.n_head * hv), 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < d.n_head; ++h) {
      const int64_t g = h / group;
      std::vector<double> s(static_cast<size_t>(n), -INFINITY);
      double top = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        if (!visible(t, j))
          continue;
        double dot = 0;
        for (int64_t i = 0; i < hd; ++i)
          dot += double(q[t * q_dim + h * hd + i]) * k[j * kv_dim + g * hd + i];
        s[j] = dot * d.score_scale();
        top = std::max(top, s[j]);
      }
      double total = 0;
      for (double& x : s)
        total += x = std::exp(x - top);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < hv; ++i)
          out[(t * d.n_head + h) * hv + i] += s[j] / total * v[j * v_dim + g * hv + i];
    }
  return out;
}

class CpuAttentionWindow : public ::testing::Test {
protected:
  // The CPU's attention of n tokens from position 0 against the masked float64 one.
  template <typename Visible> void expect_matches(const AttentionDims& d, int64_t n, Visible vis) {
    const int64_t q_dim = d.n_head * d.head_dim, kv_dim = d.n_head_kv * d.head_dim;
    const int64_t v_dim = d.n_head_kv * d.value_dim();
    const auto q = test::random_floats(n * q_dim, 1), k = test::random_floats(n * kv_dim, 2),
               v = test::random_floats(n * v_dim, 3);
    std::vector<float> kc(static_cast<size_t>(n * kv_dim)), vc(static_cast<size_t>(n * v_dim));
    KvView kv{reinterpret_cast<uint8_t*>(kc.data()), reinterpret_cast<uint8_t*>(vc.data()), n,
              kv_dim};
    kv.v_dim = v_dim;
    cpu_.kv_append(kv, k.data(), v.data(), 0, n);
    std::vector<float> out(static_cast<size_t>(n * d.n_head * d.value_dim()));
    cpu_.attention(q.data(), kv, d, 0, n, out.data());
    const std::vector<double> want = masked_attention(q, k, v, d, n, vis);
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_NEAR(out[i], want[i], 2e-6)
          << "value " << i << " (token " << i / (d.n_head * d.value_dim()) << ")";
  }

  ThreadPool pool_{2};
  CpuOps cpu_{pool_};
};

TEST_F(CpuAttentionWindow, BothWaysWindowIsCentredOnTheQuery) {
  for (int64_t window : {1, 6, 7, 16, 100}) {
    SCOPED_TRACE("window " + std::to_string(window));
    AttentionDims d{4, 2, 16};
    d.causal = false;
    d.window = window;
    d.symmetric_window = true;
    const int64_t half = window / 2;
    expect_matches(d, 23, [&](int64_t t, int64_t j) { return std::abs(t - j) <= half; });
    EXPECT_EQ(d.first_visible(10), std::max<int64_t>(0, 10 - half));
    EXPECT_EQ(d.visible_end(10, 23), std::min<int64_t>(23, 10 + half + 1));
  }
}

TEST_F(CpuAttentionWindow, BothWaysWithoutAWindowSeesTheWholeText) {
  AttentionDims d{4, 4, 8};
  d.causal = false;
  d.symmetric_window = true; // no window: the flag changes nothing
  expect_matches(d, 19, [](int64_t, int64_t) { return true; });
}

TEST_F(CpuAttentionWindow, CausalWindowSeesItsLastPositions) {
  AttentionDims d{4, 2, 16};
  d.window = 5;
  expect_matches(d, 23, [](int64_t t, int64_t j) { return j <= t && t - j < 5; });
  // The symmetric flag is for models attending both ways; a causal window keeps its meaning.
  d.symmetric_window = true;
  expect_matches(d, 23, [](int64_t t, int64_t j) { return j <= t && t - j < 5; });
}

// Llama 4's chunks: a query sees its chunk's positions up to itself, none before the chunk.
TEST_F(CpuAttentionWindow, ChunkedSeesItsChunkSoFar) {
  for (int64_t chunk : {1, 5, 8}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    AttentionDims d{4, 2, 16};
    d.window = chunk;
    d.chunked = true;
    expect_matches(d, 23, [&](int64_t t, int64_t j) { return j <= t && j / chunk == t / chunk; });
  }
}

// DeepSeek's latent attention: values narrower than keys, with one KV head (the latent)
// and with two (each group's slice of the V row at its own offset).
TEST_F(CpuAttentionWindow, ValuesNarrowerThanKeys) {
  for (const int64_t n_head_kv : {1, 2}) {
    SCOPED_TRACE(std::to_string(n_head_kv) + " KV heads");
    AttentionDims d{4, n_head_kv, 40};
    d.head_dim_v = 24;
    expect_matches(d, 11, [](int64_t t, int64_t j) { return j <= t; });
  }
}

} // namespace
} // namespace pshard
