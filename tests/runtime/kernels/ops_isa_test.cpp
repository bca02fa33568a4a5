// The vectorised ops (RMSNorm, softmax, SiLU, GELU's two forms, one-head attention, Gated
// DeltaNet's step) on every ISA
// path this CPU has, against float64 references; paths it lacks are skipped.
#include "isa_test_fixture.h"
#include "kernel_test_util.h"
#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/kernels/delta_net.h"
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/ops.h"
#include "runtime/kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <utility>

namespace pshard {
namespace {

// One head's view of a cache whose K and V rows (kr / vr bytes) hold `type` values; the
// query, output and scores are the caller's.
AttendHead cache_head(const uint8_t* k, const uint8_t* v, size_t kr, size_t vr, TensorType kt,
                      TensorType vt, int64_t n_kv, int64_t head_dim, float scale) {
  AttendHead a;
  a.k = k;
  a.v = v;
  a.k_row_bytes = kr;
  a.v_row_bytes = vr;
  a.k_type = kt;
  a.v_type = vt;
  a.n_kv = n_kv;
  a.head_dim = head_dim;
  a.scale = scale;
  return a;
}

using kernels::Isa;

class OpsOnIsa : public test::OnIsa {};

TEST_P(OpsOnIsa, SoftmaxSiluAndGeluOnOddLengths) {
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
    // GeGLU: 0.5 g (1 + tanh(u)), u = sqrt(2/pi) (g + 0.044715 g^3), in double as
    // g / (1 + e^(-2u)) (the same value; 1 + tanh(u) cancels to nothing for u << 0).
    gelu_mul(x.data(), up.data(), out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double g = x[i], u = std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g),
                   want = g / (1 + std::exp(-2 * u)) * up[i];
      // z = 2u rounds in float: its ulps scale e^(-z) by |z| * 2^-23 at most.
      const double rel = 2e-6 + 2 * std::fabs(u) * 0x1p-23;
      ASSERT_NEAR(out[i], want, rel * std::fabs(want) + 1e-30) << "n=" << n << " i=" << i;
    }
  }
}

// GELU's exact form: erf within 1.5e-7 (Abramowitz and Stegun 7.1.26) plus float rounding,
// so 0.5 x (1 + erf) is within 2.5e-7 |x| of the float64 value, at any length (tails).
TEST_P(OpsOnIsa, GeluErfOnOddLengths) {
  for (int64_t n : {1, 7, 8, 15, 16, 17, 1001}) {
    std::vector<float> x = test::random_floats(n, 21, 6.0f);
    x[0] = 0.0f; // odd and zero at zero
    std::vector<float> y = x;
    gelu_erf(y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[i], want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      ASSERT_NEAR(y[i], want, 2.5e-7 * std::fabs(v) + 1e-6 * std::fabs(want) + 1e-30)
          << "n=" << n << " i=" << i << " x=" << v;
    }
  }
  std::vector<float> far = {-30.0f, -9.0f, 9.0f, 30.0f};
  gelu_erf(far.data(), 4);
  EXPECT_NEAR(far[0], 0.0f, 1e-6f);
  EXPECT_NEAR(far[1], 0.0f, 1e-6f);
  EXPECT_EQ(far[2], 9.0f);
  EXPECT_EQ(far[3], 30.0f);
}

// ModernBERT's GeGLU: gelu_erf(gate) * up, in place over the gate or into another row, and a
// LayerNorm without a bias is the one with a zero bias.
TEST_P(OpsOnIsa, GeluErfMulAndLayerNormWithoutBias) {
  for (int64_t n : {1, 17, 1001}) {
    const std::vector<float> g = test::random_floats(n, 22, 4.0f), u = test::random_floats(n, 23);
    std::vector<float> out(n), in_place = g;
    gelu_erf_mul(g.data(), u.data(), out.data(), n);
    gelu_erf_mul(in_place.data(), u.data(), in_place.data(), n);
    EXPECT_EQ(in_place, out);
    for (int64_t i = 0; i < n; ++i) {
      const double v = g[i], want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) * u[i];
      ASSERT_NEAR(out[i], want, (2.5e-7 * std::fabs(v) + 1e-6 * std::fabs(want)) * 2 + 1e-30)
          << "n=" << n << " i=" << i;
    }
    const std::vector<float> w = test::random_floats(n, 24), zero(n, 0.0f);
    std::vector<float> biased(n), plain(n);
    layer_norm(g.data(), w.data(), zero.data(), biased.data(), n, 1e-5f);
    layer_norm(g.data(), w.data(), nullptr, plain.data(), n, 1e-5f);
    EXPECT_EQ(plain, biased);
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

// Grouped-query attention: a group of query heads in one call (each K/V row read once for
// all) gives every head the result of its own call, bit for bit — with a window's first
// row, soft-capping, each head's own sink, a paged cache, values narrower than keys, and
// head sizes that leave partial vectors (72 and 40 values).
TEST_P(OpsOnIsa, AttendHeadGroupIsEachHeadAlone) {
  struct Variant {
    int64_t first;
    float softcap;
    bool sinks;
    bool paged;
  };
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0})
    for (const auto& [hk, hv] :
         {std::pair<int64_t, int64_t>{64, 64}, {96, 64}, {128, 128}, {72, 40}})
      for (int64_t group : {2, 5, 16})
        for (const Variant var : {Variant{0, 0.0f, false, false}, Variant{7, 0.0f, false, true},
                                  Variant{3, 0.8f, true, false}, Variant{0, 0.0f, true, true}}) {
          if (type == TensorType::kQ8_0 && (hk % 32 != 0 || hv % 32 != 0))
            continue; // Q8_0 rows are whole blocks of 32
          SCOPED_TRACE(std::string(tensor_type_name(type)) + " " + std::to_string(hk) + "/" +
                       std::to_string(hv) + " group=" + std::to_string(group) +
                       " first=" + std::to_string(var.first));
          const int64_t n_kv = 40, page_rows = 16, n_pages = 3;
          const std::vector<float> q = test::random_floats(group * hk, 11);
          const std::vector<float> kf = test::random_floats(n_kv * hk, 12);
          const std::vector<float> vf = test::random_floats(n_kv * hv, 13);
          const std::vector<float> sinks = test::random_floats(group, 14);
          const size_t kr = *tensor_bytes(type, hk), vr = *tensor_bytes(type, hv);
          std::vector<uint8_t> k(kr * n_pages * page_rows), v(vr * n_pages * page_rows);
          const std::vector<int32_t> pages = {2, 0, 1};
          for (int64_t j = 0; j < n_kv; ++j) {
            const size_t row =
                var.paged
                    ? static_cast<size_t>(pages[static_cast<size_t>(j / page_rows)] * page_rows +
                                          j % page_rows)
                    : static_cast<size_t>(j);
            ASSERT_TRUE(quantize_row(type, kf.data() + j * hk, k.data() + row * kr, hk).ok());
            ASSERT_TRUE(quantize_row(type, vf.data() + j * hv, v.data() + row * vr, hv).ok());
          }
          AttendHead a = cache_head(k.data(), v.data(), kr, vr, type, type, n_kv, hk, 0.125f);
          a.first = var.first;
          a.v_dim = hv;
          a.softcap = var.softcap;
          a.has_sink = var.sinks;
          if (var.paged) {
            a.pages = pages.data();
            a.page_rows = page_rows;
          }
          std::vector<float> together(static_cast<size_t>(group * hv), -1.0f);
          std::vector<float> scores(static_cast<size_t>(group * a.score_stride()));
          AttendHead all = a;
          all.q = q.data();
          all.group = group;
          all.sinks = var.sinks ? sinks.data() : nullptr;
          all.out = together.data();
          all.scores = scores.data();
          attend_head(all);
          for (int64_t g = 0; g < group; ++g) {
            std::vector<float> alone(static_cast<size_t>(hv), -2.0f);
            AttendHead one = a;
            one.q = q.data() + g * hk;
            one.sink = sinks[static_cast<size_t>(g)];
            one.out = alone.data();
            one.scores = scores.data();
            attend_head(one);
            ASSERT_EQ(0, std::memcmp(alone.data(), together.data() + g * hv, hv * sizeof(float)))
                << "head " << g << " differs from its own call";
          }
        }
}

// Scores are taken four rows at a time where a run of the cache allows and one at a time
// elsewhere (a page's or a ring's end splits runs), so a row's score, and so the result, must
// not depend on where the runs break: the same rows attended from a contiguous cache, from
// 5-row pages in shuffled order and from a ring that wraps give the same bits.
TEST_P(OpsOnIsa, AttendHeadIsTheSameWhereverRunsBreak) {
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0})
    for (int64_t hd : {64, 128, 72})
      for (int64_t first : {0, 1, 3}) {
        if (type == TensorType::kQ8_0 && hd % 32 != 0)
          continue; // Q8_0 rows are whole blocks of 32
        SCOPED_TRACE(std::string(tensor_type_name(type)) + " " + std::to_string(hd) +
                     " first=" + std::to_string(first));
        const int64_t n_kv = 37, page_rows = 5, n_pages = 8, ring = 38, group = 3;
        const std::vector<float> q = test::random_floats(group * hd, 21);
        const std::vector<float> kf = test::random_floats(n_kv * hd, 22);
        const std::vector<float> vf = test::random_floats(n_kv * hd, 23);
        const std::vector<int32_t> pages = {6, 1, 7, 0, 4, 2, 5, 3};
        const size_t rb = *tensor_bytes(type, hd);
        // Position j's row in each layout: as it is; page pages[j / 5], row j % 5; and in a
        // ring of 38 rows whose position 0 sits at row 7 (positions 31.. wrap to the start).
        std::vector<uint8_t> contiguous(rb * n_kv * 2), paged(rb * n_pages * page_rows * 2),
            ringed(rb * ring * 2);
        const size_t half_c = rb * n_kv, half_p = rb * n_pages * page_rows, half_r = rb * ring;
        for (int64_t j = 0; j < n_kv; ++j) {
          const size_t rows[3] = {
              static_cast<size_t>(j),
              static_cast<size_t>(pages[static_cast<size_t>(j / page_rows)] * page_rows +
                                  j % page_rows),
              static_cast<size_t>((j + 7) % ring)};
          uint8_t* bases[3] = {contiguous.data(), paged.data(), ringed.data()};
          const size_t halves[3] = {half_c, half_p, half_r};
          for (int l = 0; l < 3; ++l) {
            ASSERT_TRUE(quantize_row(type, kf.data() + j * hd, bases[l] + rows[l] * rb, hd).ok());
            ASSERT_TRUE(
                quantize_row(type, vf.data() + j * hd, bases[l] + halves[l] + rows[l] * rb, hd)
                    .ok());
          }
        }
        std::vector<float> want(static_cast<size_t>(group * hd), -1.0f);
        std::vector<float> scores(static_cast<size_t>(group * (n_kv + 1)));
        AttendHead a = cache_head(contiguous.data(), contiguous.data() + half_c, rb, rb, type, type,
                                  n_kv, hd, 0.09f);
        a.first = first;
        a.q = q.data();
        a.group = group;
        a.scores = scores.data();
        a.out = want.data();
        attend_head(a);

        std::vector<float> got(want.size(), -2.0f);
        AttendHead p = a;
        p.k = paged.data();
        p.v = paged.data() + half_p;
        p.pages = pages.data();
        p.page_rows = page_rows;
        p.out = got.data();
        attend_head(p);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
            << "5-row pages differ from the contiguous cache";

        // The ring's view: row j % ring of a cache whose position 0 is at row 0, so the
        // positions are shifted by the 7 rows the ring starts at (the same rows in order).
        std::fill(got.begin(), got.end(), -3.0f);
        AttendHead r = a;
        r.k = ringed.data();
        r.v = ringed.data() + half_r;
        r.first = first + 7;
        r.n_kv = n_kv + 7;
        r.ring = ring;
        r.out = got.data();
        std::vector<float> ring_scores(static_cast<size_t>(group * r.score_stride()));
        r.scores = ring_scores.data();
        attend_head(r);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
            << "a wrapping ring differs from the contiguous cache";
      }
}

// Decode's lockstep over a token's KV heads (attend_heads, as CpuOps::attention runs a
// thread's heads): each head's result is its own attend_head call's, bit for bit — 11 KV
// heads (a lockstep of 8, then 3), with a window's first row, soft-capping and sinks, a paged
// cache and a wrapping ring, values narrower than keys, partial vectors.
TEST_P(OpsOnIsa, AttendHeadsInLockstepAreEachHeadAlone) {
  struct Layout {
    const char* name;
    int64_t first, ring;
    bool paged;
    float softcap;
    bool sinks;
  };
  const int64_t n_kv_head = 11, group = 2, n_kv = 45, page_rows = 16;
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0})
    for (const auto& [hk, hv] : {std::pair<int64_t, int64_t>{128, 128}, {96, 64}, {72, 40}})
      for (const Layout lay :
           {Layout{"contiguous", 0, 0, false, 0.0f, false}, Layout{"paged", 5, 0, true, 0.0f, true},
            Layout{"ring", 20, 32, false, 0.7f, false}}) {
        if (type == TensorType::kQ8_0 && (hk % 32 != 0 || hv % 32 != 0))
          continue; // Q8_0 rows are whole blocks of 32
        SCOPED_TRACE(std::string(tensor_type_name(type)) + " " + std::to_string(hk) + "/" +
                     std::to_string(hv) + " " + lay.name);
        const size_t ks = *tensor_bytes(type, hk), vs = *tensor_bytes(type, hv);
        const size_t kr = ks * n_kv_head, vr = vs * n_kv_head;        // a row: every KV head
        const int64_t rows = lay.ring > 0 ? lay.ring : 4 * page_rows; // 4 pages hold 45 rows
        std::vector<uint8_t> k(kr * rows), v(vr * rows);
        const std::vector<int32_t> pages = {3, 0, 2, 1};
        const std::vector<float> kf = test::random_floats(n_kv * n_kv_head * hk, 31);
        const std::vector<float> vf = test::random_floats(n_kv * n_kv_head * hv, 32);
        for (int64_t j = 0; j < n_kv; ++j) {
          const int64_t row = lay.paged      ? pages[j / page_rows] * page_rows + j % page_rows
                              : lay.ring > 0 ? j % lay.ring
                                             : j;
          for (int64_t h = 0; h < n_kv_head; ++h) {
            ASSERT_TRUE(quantize_row(type, kf.data() + (j * n_kv_head + h) * hk,
                                     k.data() + row * kr + h * ks, hk)
                            .ok());
            ASSERT_TRUE(quantize_row(type, vf.data() + (j * n_kv_head + h) * hv,
                                     v.data() + row * vr + h * vs, hv)
                            .ok());
          }
        }
        const std::vector<float> q = test::random_floats(n_kv_head * group * hk, 33);
        const std::vector<float> sinks = test::random_floats(n_kv_head * group, 34);
        std::vector<AttendHead> heads(static_cast<size_t>(n_kv_head));
        const int64_t stride = group * (n_kv - lay.first + 1);
        std::vector<float> scores(static_cast<size_t>(n_kv_head * stride));
        std::vector<float> together(static_cast<size_t>(n_kv_head * group * hv), -1.0f);
        for (int64_t h = 0; h < n_kv_head; ++h) {
          AttendHead& a = heads[static_cast<size_t>(h)];
          a = cache_head(k.data() + h * ks, v.data() + h * vs, kr, vr, type, type, n_kv, hk, 0.11f);
          a.v_dim = hv;
          a.first = lay.first;
          a.ring = lay.ring;
          if (lay.paged) {
            a.pages = pages.data();
            a.page_rows = page_rows;
          }
          a.softcap = lay.softcap;
          a.has_sink = lay.sinks;
          a.sinks = lay.sinks ? sinks.data() + h * group : nullptr;
          a.group = group;
          a.q = q.data() + h * group * hk;
          a.out = together.data() + h * group * hv;
          a.scores = scores.data() + h * stride;
        }
        attend_heads(heads.data(), n_kv_head);
        for (int64_t h = 0; h < n_kv_head; ++h) {
          std::vector<float> alone(static_cast<size_t>(group * hv), -2.0f);
          AttendHead one = heads[static_cast<size_t>(h)];
          one.out = alone.data();
          std::vector<float> own_scores(static_cast<size_t>(stride));
          one.scores = own_scores.data();
          attend_head(one);
          ASSERT_EQ(0, std::memcmp(alone.data(), together.data() + h * group * hv,
                                   alone.size() * sizeof(float)))
              << "KV head " << h << " differs from its own call";
        }
      }
}

// DeepSeek's latent attention: keys wider than values (576 and 512 values, the values the
// keys' last 512 in a row of their own), the output value_dim() wide and nothing past it.
TEST_P(OpsOnIsa, AttendHeadWithValuesNarrowerThanKeys) {
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0})
    for (const auto& [hk, hv] : {std::pair<int64_t, int64_t>{576, 512}, {96, 64}, {40, 24}}) {
      if (type == TensorType::kQ8_0 && (hk % 32 != 0 || hv % 32 != 0))
        continue;
      SCOPED_TRACE(std::string(tensor_type_name(type)) + " " + std::to_string(hk) + "/" +
                   std::to_string(hv));
      const int64_t n_kv = 9;
      const std::vector<float> q = test::random_floats(hk, 4);
      const std::vector<float> kf = test::random_floats(n_kv * hk, 5);
      const std::vector<float> vf = test::random_floats(n_kv * hv, 6);
      const size_t kr = *tensor_bytes(type, hk), vr = *tensor_bytes(type, hv);
      std::vector<uint8_t> k(kr * n_kv), v(vr * n_kv);
      std::vector<float> kd(kf.size()), vd(vf.size());
      for (int64_t j = 0; j < n_kv; ++j) {
        ASSERT_TRUE(quantize_row(type, kf.data() + j * hk, k.data() + j * kr, hk).ok());
        ASSERT_TRUE(quantize_row(type, vf.data() + j * hv, v.data() + j * vr, hv).ok());
        dequantize_row(type, k.data() + j * kr, kd.data() + j * hk, hk);
        dequantize_row(type, v.data() + j * vr, vd.data() + j * hv, hv);
      }
      std::vector<float> out(static_cast<size_t>(hk), -1.0f), scores(n_kv + 1);
      AttendHead a = cache_head(k.data(), v.data(), kr, vr, type, type, n_kv, hk, 0.1f);
      a.q = q.data();
      a.v_dim = hv;
      a.out = out.data();
      a.scores = scores.data();
      attend_head(a);
      std::vector<double> s(n_kv);
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n_kv; ++j) {
        for (int64_t i = 0; i < hk; ++i)
          s[j] += double(q[i]) * kd[j * hk + i];
        max = std::max(max, s[j] *= 0.1);
      }
      for (double& x : s)
        sum += (x = std::exp(x - max));
      for (int64_t i = 0; i < hk; ++i) {
        if (i >= hv) {
          ASSERT_EQ(out[i], -1.0f) << "value " << i << " is past the values' width";
          continue;
        }
        double want = 0;
        for (int64_t j = 0; j < n_kv; ++j)
          want += s[j] / sum * vd[j * hv + i];
        ASSERT_NEAR(out[i], want, 2e-5) << "value " << i;
      }
    }
}

// Attention over K/V rows of every KV type (F32, F16, Q8_0), contiguous and paged, whole or
// through a sliding window (the first positions unseen; the window starting inside a page)
// with soft-capped scores and with a sink (gpt-oss: one more logit in the softmax, with
// no value), against a float64 evaluation of the rows' own (dequantized)
// values; a paged cache and a ring must give the contiguous cache's result bit for bit.
TEST_P(OpsOnIsa, AttendHeadMatchesFloat64) {
  const TensorType types[] = {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0};
  struct Variant {
    int64_t first;
    float softcap;
    bool has_sink = false;
    float sink = 0.0f;
  };
  for (TensorType kt : types)
    for (TensorType vt : types)
      for (int64_t head_dim : {64, 128, 12, 80, 96})
        for (int64_t n_kv : {1, 3, 40})
          for (const Variant var :
               {Variant{0, 0.0f}, Variant{n_kv / 3 + n_kv / 4, 0.0f}, Variant{n_kv / 2, 0.7f},
                Variant{0, 0.0f, true, 1.5f}, Variant{n_kv / 2, 0.0f, true, -0.5f}}) {
            const bool q8 = kt == TensorType::kQ8_0 || vt == TensorType::kQ8_0;
            if (q8 && head_dim % 32 != 0)
              continue;
            SCOPED_TRACE(std::string(tensor_type_name(kt)) + "/" + tensor_type_name(vt) +
                         " head_dim=" + std::to_string(head_dim) + " n_kv=" + std::to_string(n_kv) +
                         " first=" + std::to_string(var.first) +
                         " softcap=" + std::to_string(var.softcap) +
                         (var.has_sink ? " sink=" + std::to_string(var.sink) : ""));
            const int64_t width = head_dim * 3; // rows of a wider cache; this head is the 2nd
            const std::vector<float> q = test::random_floats(head_dim, 1);
            const std::vector<float> kf = test::random_floats(n_kv * width, 2);
            const std::vector<float> vf = test::random_floats(n_kv * width, 3);
            const size_t kr = *tensor_bytes(kt, width), vr = *tensor_bytes(vt, width);
            // Contiguous rows, and the same rows scattered over pages of 7 in reverse order.
            const int64_t page_rows = 7, n_pages = (n_kv + page_rows - 1) / page_rows;
            std::vector<int32_t> pages(static_cast<size_t>(n_pages));
            for (int64_t p = 0; p < n_pages; ++p)
              pages[static_cast<size_t>(p)] = static_cast<int32_t>(n_pages - 1 - p);
            std::vector<uint8_t> k(kr * n_kv), v(vr * n_kv);
            std::vector<uint8_t> kp(kr * n_pages * page_rows), vp(vr * n_pages * page_rows);
            std::vector<float> kd(kf.size()), vd(vf.size());
            for (int64_t j = 0; j < n_kv; ++j) {
              ASSERT_TRUE(quantize_row(kt, kf.data() + j * width, k.data() + j * kr, width).ok());
              ASSERT_TRUE(quantize_row(vt, vf.data() + j * width, v.data() + j * vr, width).ok());
              dequantize_row(kt, k.data() + j * kr, kd.data() + j * width, width);
              dequantize_row(vt, v.data() + j * vr, vd.data() + j * width, width);
              const size_t row = static_cast<size_t>(
                  pages[static_cast<size_t>(j / page_rows)] * page_rows + j % page_rows);
              std::copy_n(k.data() + j * kr, kr, kp.data() + row * kr);
              std::copy_n(v.data() + j * vr, vr, vp.data() + row * vr);
            }
            const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
            std::vector<float> out(head_dim, -1.0f), paged(head_dim, -2.0f), scores(n_kv + 1);
            AttendHead a = cache_head(k.data() + tensor_row_bytes(kt, head_dim),
                                      v.data() + tensor_row_bytes(vt, head_dim), kr, vr, kt, vt,
                                      n_kv, head_dim, scale);
            a.q = q.data();
            a.first = var.first;
            a.softcap = var.softcap;
            a.has_sink = var.has_sink;
            a.sink = var.sink;
            a.out = out.data();
            a.scores = scores.data();
            attend_head(a);
            a.k = kp.data() + tensor_row_bytes(kt, head_dim);
            a.v = vp.data() + tensor_row_bytes(vt, head_dim);
            a.pages = pages.data();
            a.page_rows = page_rows;
            a.out = paged.data();
            attend_head(a);
            EXPECT_EQ(paged, out) << "paged and contiguous caches differ";
            // A sliding-window layer's ring (runtime/model/kv_ring.h): the seen rows at
            // j % ring, wrapping inside the window; the rows of unseen positions garbage.
            const int64_t ring = n_kv - var.first + 2;
            std::vector<uint8_t> kg(kr * ring, 0x7b), vg(vr * ring, 0x7b);
            for (int64_t j = var.first; j < n_kv; ++j) {
              std::copy_n(k.data() + j * kr, kr, kg.data() + (j % ring) * kr);
              std::copy_n(v.data() + j * vr, vr, vg.data() + (j % ring) * vr);
            }
            std::vector<float> ringed(head_dim, -3.0f);
            a.k = kg.data() + tensor_row_bytes(kt, head_dim);
            a.v = vg.data() + tensor_row_bytes(vt, head_dim);
            a.pages = nullptr;
            a.page_rows = 0;
            a.ring = ring;
            a.out = ringed.data();
            attend_head(a);
            EXPECT_EQ(ringed, out) << "a ring and a contiguous cache differ";
            std::vector<double> s(n_kv);
            double max = -INFINITY, sum = 0;
            for (int64_t j = var.first; j < n_kv; ++j) {
              for (int64_t i = 0; i < head_dim; ++i)
                s[j] += double(q[i]) * kd[j * width + head_dim + i];
              s[j] *= scale;
              if (var.softcap > 0)
                s[j] = var.softcap * std::tanh(s[j] / var.softcap);
              max = std::max(max, s[j]);
            }
            if (var.has_sink)
              max = std::max(max, double(var.sink));
            for (int64_t j = 0; j < var.first; ++j)
              s[j] = -INFINITY; // unseen: weight 0
            for (double& x : s)
              sum += (x = std::exp(x - max));
            if (var.has_sink) // in the denominator only
              sum += std::exp(var.sink - max);
            for (int64_t i = 0; i < head_dim; ++i) {
              double want = 0, abs = 0;
              for (int64_t j = 0; j < n_kv; ++j) {
                want += s[j] / sum * vd[j * width + head_dim + i];
                abs += s[j] / sum * std::fabs(vd[j * width + head_dim + i]);
              }
              ASSERT_NEAR(out[i], want, 1e-5 * abs + 1e-30) << "i=" << i;
            }
          }
}

// Gated DeltaNet's step (delta_net.h) against float64, rows of 40 values (a masked tail on
// every path) and 12 of them, two tokens in a row so the second reads the first's state.
TEST_P(OpsOnIsa, DeltaStepMatchesFloat64) {
  const int64_t dk = 12, dv = 40;
  std::vector<float> s(static_cast<size_t>(dk * dv)), delta(dv), out(dv);
  std::vector<double> sd(s.size());
  for (size_t i = 0; i < s.size(); ++i)
    sd[i] = s[i] = 0.3f * std::sin(0.7f * static_cast<float>(i));
  for (int t = 0; t < 2; ++t) {
    std::vector<float> k(dk), q(dk), v(dv);
    for (int64_t i = 0; i < dk; ++i) {
      k[i] = std::cos(0.9f * static_cast<float>(i + t));
      q[i] = std::sin(1.3f * static_cast<float>(i) + static_cast<float>(t));
    }
    for (int64_t j = 0; j < dv; ++j)
      v[j] = 0.5f * std::cos(0.4f * static_cast<float>(j * (t + 1)));
    const float decay = 0.9f - 0.1f * static_cast<float>(t), beta = 0.6f;
    kernels::kernel_set().ops.delta_step(DeltaStep{s.data(), k.data(), q.data(), v.data(), decay,
                                                   beta, dk, dv, delta.data(), out.data()});
    std::vector<double> kv(dv, 0.0), o(dv, 0.0);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j)
        kv[j] += (sd[i * dv + j] *= decay) * k[i];
    for (int64_t j = 0; j < dv; ++j)
      kv[j] = (v[j] - kv[j]) * beta;
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j)
        o[j] += (sd[i * dv + j] += k[i] * kv[j]) * q[i];
    for (int64_t j = 0; j < dv; ++j) {
      ASSERT_NEAR(delta[j], kv[j], 1e-5) << "token " << t << " j=" << j;
      ASSERT_NEAR(out[j], o[j], 1e-5) << "token " << t << " j=" << j;
    }
    for (size_t i = 0; i < s.size(); ++i)
      ASSERT_NEAR(s[i], sd[i], 1e-5) << "token " << t << " state " << i;
  }
}

// The tiled attention's block step over head size hd (see the test below).
void check_attend_block(int64_t hd) {
  constexpr int64_t kQueries = 19, kKeys = 150;
  const int64_t stride = 2 * hd;
  std::vector<float> q(kQueries * stride), k(kKeys * stride), v(kKeys * stride);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = std::cos(0.23f * static_cast<float>(i) + 0.5f);
    v[i] = std::sin(0.11f * static_cast<float>(i) - 1.0f);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // Runs the blocks over queries [q0, q0 + nq) into acc/max/sum rows of their own.
  auto run = [&](int64_t q0, int64_t nq, float* acc, float* max, float* sum) {
    std::fill_n(acc, nq * hd, 0.0f);
    std::fill_n(max, nq, -INFINITY);
    std::fill_n(sum, nq, 0.0f);
    for (int64_t b0 = 0; b0 < kKeys; b0 += kAttendBlockKeys) {
      AttendBlock b;
      b.q = q.data() + q0 * stride + hd; // the second head
      b.q_stride = b.kv_stride = stride;
      b.nq = nq;
      b.k = k.data() + b0 * stride + hd;
      b.v = v.data() + b0 * stride + hd;
      b.nb = std::min(kAttendBlockKeys, kKeys - b0);
      b.head_dim = hd;
      b.scale = scale;
      b.acc = acc;
      b.max = max;
      b.sum = sum;
      kernels::kernel_set().ops.attend_block(b);
    }
  };
  std::vector<float> acc(kQueries * hd), max(kQueries), sum(kQueries);
  run(0, kQueries, acc.data(), max.data(), sum.data());
  for (int64_t i = 0; i < kQueries; ++i) {
    std::vector<double> s(kKeys);
    double m = -INFINITY, total = 0;
    for (int64_t j = 0; j < kKeys; ++j) {
      double d = 0;
      for (int64_t c = 0; c < hd; ++c)
        d += static_cast<double>(q[i * stride + hd + c]) * k[j * stride + hd + c];
      s[j] = d * scale;
      m = std::max(m, s[j]);
    }
    std::vector<double> o(hd, 0.0);
    for (int64_t j = 0; j < kKeys; ++j) {
      const double p = std::exp(s[j] - m);
      total += p;
      for (int64_t c = 0; c < hd; ++c)
        o[c] += p * v[j * stride + hd + c];
    }
    ASSERT_NEAR(max[i], m, 1e-5) << "head size " << hd << " query " << i;
    for (int64_t c = 0; c < hd; ++c)
      ASSERT_NEAR(acc[i * hd + c] / sum[i], o[c] / total, 1e-5)
          << "head size " << hd << " query " << i << " c " << c;
    std::vector<float> one_acc(hd);
    float one_max, one_sum;
    run(i, 1, one_acc.data(), &one_max, &one_sum);
    EXPECT_EQ(std::memcmp(one_acc.data(), acc.data() + i * hd, hd * sizeof(float)), 0)
        << "head size " << hd << " query " << i;
    EXPECT_EQ(one_max, max[i]);
    EXPECT_EQ(one_sum, sum[i]);
  }
}

// The tiled attention's block step: three key blocks (the last short) over 19 queries
// give the float64 online softmax's output; and each query's bits are the same whatever
// queries share the call (one at a time, or all 19: full vectors and a masked one). Head
// sizes 72 (Qwen3-VL-8B's tower; not a multiple of 16) and 52 (not a multiple of 8).
TEST_P(OpsOnIsa, AttendBlockMatchesFloat64AndEachQueryIsItsOwn) {
  for (const int64_t hd : {72, 52})
    check_attend_block(hd);
}

INSTANTIATE_TEST_SUITE_P(Paths, OpsOnIsa, testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512),
                         test::isa_param_name);

} // namespace
} // namespace pshard
