// Gated DeltaNet's kernel (runtime/kernels/delta_net.h): a text in one pass or token by
// token ends in the same outputs and state bit for bit (what plan invariance and chunked
// prompts rest on); a pass at position 0 ignores whatever the rows held; the causal conv
// weighs each channel's last inputs, oldest first, across passes; the state's rows
// are the fewest that hold it, heads whole, split over K and V; the outputs follow the
// recurrence as written.
#include "runtime/core/thread_pool.h"
#include "runtime/kernels/delta_net.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace pshard {
namespace {

DeltaNetDims dims() {
  DeltaNetDims d;
  d.n_k_heads = 2;
  d.n_v_heads = 4;
  d.d_k = 8;
  d.d_v = 8;
  d.conv_kernel = 4;
  return d;
}

std::vector<float> random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v)
    x = u(g);
  return v;
}

struct Layer {
  DeltaNetDims d = dims();
  std::vector<float> conv = random(static_cast<size_t>(d.conv_dim() * d.conv_kernel), 1);
  std::vector<float> ssm_a = random(4, 2, -1.5f, -0.5f);
  std::vector<float> dt = random(4, 3, -3.0f, -1.0f);
  // Rows of 24 K values and 40 V values: the state is split over both regions.
  size_t k_row = 24 * sizeof(float), v_row = 40 * sizeof(float);
  int64_t rows = delta_net_state_rows(d, k_row, v_row);
  std::vector<uint8_t> k = std::vector<uint8_t>(static_cast<size_t>(rows) * k_row),
                       v = std::vector<uint8_t>(static_cast<size_t>(rows) * v_row);
  DeltaNetState state() { return delta_net_state(d, k.data(), v.data(), rows, k_row); }
};

// Runs tokens [t0, t0 + n) of `mixed`/`ba` (all tokens' rows) as one pass at position t0.
void pass(ThreadPool& pool, Layer& l, const std::vector<float>& mixed, const std::vector<float>& ba,
          int64_t t0, int64_t n, std::vector<float>& out) {
  const int64_t c = l.d.conv_dim(), stride = 2 * l.d.n_v_heads;
  std::vector<float> m(mixed.begin() + t0 * c, mixed.begin() + (t0 + n) * c);
  delta_net_forward(pool, l.d, l.conv.data(), l.ssm_a.data(), l.dt.data(), m.data(),
                    ba.data() + t0 * stride, ba.data() + t0 * stride, stride, l.state(), t0, n,
                    out.data() + t0 * l.d.value_dim());
}

TEST(DeltaNet, OnePassOrTokenByTokenGiveTheSameBits) {
  ThreadPool pool(2);
  const int64_t n = 9;
  Layer whole, steps;
  const auto mixed = random(static_cast<size_t>(n * whole.d.conv_dim()), 4);
  const auto ba = random(static_cast<size_t>(n * 2 * whole.d.n_v_heads), 5);
  std::vector<float> a(static_cast<size_t>(n * whole.d.value_dim())), b(a.size());
  pass(pool, whole, mixed, ba, 0, n, a);
  pass(pool, steps, mixed, ba, 0, 2, b);
  for (int64_t t = 2; t < n; ++t)
    pass(pool, steps, mixed, ba, t, 1, b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(whole.k, steps.k);
  EXPECT_EQ(whole.v, steps.v);
}

TEST(DeltaNet, APassAtPositionZeroStartsFromZeroWhateverTheRowsHold) {
  ThreadPool pool(1);
  Layer clean, stale;
  std::fill(stale.k.begin(), stale.k.end(), uint8_t{0x3f}); // ~0.75 everywhere
  std::fill(stale.v.begin(), stale.v.end(), uint8_t{0x3f});
  const auto mixed = random(static_cast<size_t>(3 * clean.d.conv_dim()), 6);
  const auto ba = random(static_cast<size_t>(3 * 2 * clean.d.n_v_heads), 7);
  std::vector<float> a(static_cast<size_t>(3 * clean.d.value_dim())), b(a.size());
  pass(pool, clean, mixed, ba, 0, 3, a);
  pass(pool, stale, mixed, ba, 0, 3, b);
  EXPECT_EQ(a, b);
}

TEST(DeltaNet, TheStateRowsAreTheFewestThatHoldItHeadsWhole) {
  const DeltaNetDims d = dims(); // conv 3 x 48 floats, 4 heads of 64
  for (size_t k_row : {24u * 4u, 64u * 4u, 7u * 4u})
    for (size_t v_row : {40u * 4u, 64u * 4u, 9u * 4u}) {
      const int64_t rows = delta_net_state_rows(d, k_row, v_row);
      auto holds = [&](int64_t r) {
        const size_t kb = static_cast<size_t>(r) * k_row, vb = static_cast<size_t>(r) * v_row;
        const size_t conv = d.conv_state_floats() * 4, head = d.head_state_floats() * 4;
        return kb >= conv && (kb - conv) / head + vb / head >= 4;
      };
      EXPECT_TRUE(holds(rows)) << k_row << " " << v_row;
      EXPECT_FALSE(holds(rows - 1)) << k_row << " " << v_row;
      std::vector<uint8_t> k(static_cast<size_t>(rows) * k_row),
          v(static_cast<size_t>(rows) * v_row);
      const DeltaNetState s = delta_net_state(d, k.data(), v.data(), rows, k_row);
      for (int64_t h = 0; h < 4; ++h) { // every head inside its region
        const auto* at = reinterpret_cast<const uint8_t*>(s.head(h, d.head_state_floats()));
        const bool in_k = at >= k.data() + d.conv_state_floats() * 4 &&
                          at + d.head_state_floats() * 4 <= k.data() + k.size();
        const bool in_v = at >= v.data() && at + d.head_state_floats() * 4 <= v.data() + v.size();
        EXPECT_TRUE(in_k || in_v) << "head " << h;
      }
    }
}

// The causal conv: each token's value channels (left in place by the q/k normalisation)
// are silu of its channel's last four inputs times the channel's taps, oldest first —
// across a pass boundary too, where the earlier inputs come from the state.
TEST(DeltaNet, TheConvWeighsEachChannelsLastInputsOldestFirst) {
  ThreadPool pool(2);
  Layer l;
  const int64_t n = 7, c_dim = l.d.conv_dim(), taps = l.d.conv_kernel;
  const auto mixed = random(static_cast<size_t>(n * c_dim), 12);
  const auto ba = random(static_cast<size_t>(n * 2 * l.d.n_v_heads), 13);
  std::vector<float> out(static_cast<size_t>(n * l.d.value_dim()));
  auto silu = [](double x) { return x / (1.0 + std::exp(-x)); };
  for (const auto& [t0, len] : {std::pair<int64_t, int64_t>{0, 2}, {2, 5}}) {
    std::vector<float> m(mixed.begin() + t0 * c_dim, mixed.begin() + (t0 + len) * c_dim);
    delta_net_forward(pool, l.d, l.conv.data(), l.ssm_a.data(), l.dt.data(), m.data(),
                      ba.data() + t0 * 2 * l.d.n_v_heads, ba.data() + t0 * 2 * l.d.n_v_heads,
                      2 * l.d.n_v_heads, l.state(), t0, len, out.data() + t0 * l.d.value_dim());
    for (int64_t t = t0; t < t0 + len; ++t)
      for (int64_t c = 2 * l.d.key_dim(); c < c_dim; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < taps; ++j) {
          const int64_t at = t - (taps - 1) + j; // oldest first
          if (at >= 0)
            sum += static_cast<double>(l.conv[static_cast<size_t>(c * taps + j)]) *
                   mixed[static_cast<size_t>(at * c_dim + c)];
        }
        EXPECT_NEAR(m[static_cast<size_t>((t - t0) * c_dim + c)], silu(sum), 1e-5)
            << "token " << t << ", channel " << c;
      }
  }
}

// One token, one head pair, checked against the recurrence written out in double.
TEST(DeltaNet, OneTokenFollowsTheRecurrence) {
  ThreadPool pool(1);
  Layer l;
  l.d.n_k_heads = 1;
  l.d.n_v_heads = 1;
  l.d.conv_kernel = 1; // the conv is one tap per channel
  l.conv = random(static_cast<size_t>(l.d.conv_dim()), 8);
  l.rows = delta_net_state_rows(l.d, l.k_row, l.v_row);
  l.k.assign(static_cast<size_t>(l.rows) * l.k_row, 0);
  l.v.assign(static_cast<size_t>(l.rows) * l.v_row, 0);
  const auto mixed = random(static_cast<size_t>(l.d.conv_dim()), 9);
  const std::vector<float> ba = {0.3f, -0.7f};
  std::vector<float> out(8);
  pass(pool, l, mixed, ba, 0, 1, out);
  auto silu = [](double x) { return x / (1.0 + std::exp(-x)); };
  std::vector<double> y(static_cast<size_t>(l.d.conv_dim()));
  for (size_t c = 0; c < y.size(); ++c)
    y[c] = silu(static_cast<double>(l.conv[c]) * mixed[c]);
  auto l2 = [](double* x, double scale) {
    double s = 0;
    for (int i = 0; i < 8; ++i)
      s += x[i] * x[i];
    for (int i = 0; i < 8; ++i)
      x[i] *= scale / std::sqrt(s);
  };
  l2(y.data(), 1.0 / std::sqrt(8.0));
  l2(y.data() + 8, 1.0);
  const double beta = 1.0 / (1.0 + std::exp(-0.3));
  // From a zero state: S = k ⊗ (v·beta) (the decay scales zeros), out = Sᵀq = v·beta·(k·q).
  double kq = 0;
  for (int i = 0; i < 8; ++i)
    kq += y[8 + static_cast<size_t>(i)] * y[static_cast<size_t>(i)];
  for (int j = 0; j < 8; ++j)
    EXPECT_NEAR(out[static_cast<size_t>(j)], y[16 + static_cast<size_t>(j)] * beta * kq, 1e-6);
}

} // namespace
} // namespace pshard
