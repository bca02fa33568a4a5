// Prefill's tiled attention (attention_tile.h) on every ISA path this CPU has: a tile of
// consecutive query tokens gives each token the bits of its own attend_head call, over
// every KV type, contiguous, paged and ring caches, causal prefixes, sliding windows,
// soft-capping and sinks, and an encoder's two-way view.
#include "isa_test_fixture.h"
#include "kernel_test_util.h"
#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/kernels/quantize.h"

#include <cstring>
#include <gtest/gtest.h>
#include <string>

namespace pshard {
namespace {

using kernels::Isa;

class TileOnIsa : public test::OnIsa {};

enum class Layout { kContiguous, kPaged, kRing };
enum class View { kCausal, kWindow, kEncoder };

struct Case {
  TensorType kt, vt;
  int64_t hk, hv, group;
  Layout layout;
  View view;
  bool capped_with_sinks;
  int64_t pos0; // the tile's first position
};

std::string name_of(const Case& c) {
  return std::string(tensor_type_name(c.kt)) + "/" + tensor_type_name(c.vt) + " " +
         std::to_string(c.hk) + "/" + std::to_string(c.hv) + " group=" + std::to_string(c.group) +
         " layout=" + std::to_string(static_cast<int>(c.layout)) +
         " view=" + std::to_string(static_cast<int>(c.view)) +
         (c.capped_with_sinks ? " capped+sinks" : "") + " pos0=" + std::to_string(c.pos0);
}

constexpr int64_t kTokens = 6, kWindow = 9, kPageRows = 7;

// The cache's rows for positions [0, n_pos) of a 3-KV-head cache (this head the 2nd), laid
// out as the case says; AttendHead fields for the layout are set on `a`.
struct Cache {
  std::vector<uint8_t> k, v;
  std::vector<int32_t> pages;
};
Cache make_cache(const Case& c, int64_t n_pos, AttendHead& a) {
  const int64_t wk = 3 * c.hk, wv = 3 * c.hv;
  const size_t kr = *tensor_bytes(c.kt, wk), vr = *tensor_bytes(c.vt, wv);
  const int64_t n_pages = (n_pos + kPageRows - 1) / kPageRows;
  const int64_t ring = kWindow + kTokens + 1; // a window plus a pass, and then some
  const int64_t rows = c.layout == Layout::kPaged  ? n_pages * kPageRows
                       : c.layout == Layout::kRing ? ring
                                                   : n_pos;
  Cache out;
  out.k.assign(kr * rows, 0x5a); // rows no position lands in stay garbage
  out.v.assign(vr * rows, 0x5a);
  for (int64_t p = 0; p < n_pages; ++p) // reverse order: pages[0] is the last block
    out.pages.push_back(static_cast<int32_t>(n_pages - 1 - p));
  for (int64_t j = 0; j < n_pos; ++j) {
    const int64_t row = c.layout == Layout::kPaged
                            ? out.pages[j / kPageRows] * kPageRows + j % kPageRows
                        : c.layout == Layout::kRing ? j % ring
                                                    : j;
    const std::vector<float> kf = test::random_floats(wk, 100 + static_cast<uint32_t>(j));
    const std::vector<float> vf = test::random_floats(wv, 500 + static_cast<uint32_t>(j));
    EXPECT_TRUE(quantize_row(c.kt, kf.data(), out.k.data() + row * kr, wk).ok());
    EXPECT_TRUE(quantize_row(c.vt, vf.data(), out.v.data() + row * vr, wv).ok());
  }
  a.k = out.k.data() + tensor_row_bytes(c.kt, c.hk);
  a.v = out.v.data() + tensor_row_bytes(c.vt, c.hv);
  a.k_row_bytes = kr;
  a.v_row_bytes = vr;
  a.k_type = c.kt;
  a.v_type = c.vt;
  if (c.layout == Layout::kPaged) {
    a.pages = out.pages.data();
    a.page_rows = kPageRows;
  } else if (c.layout == Layout::kRing) {
    a.ring = ring;
  }
  return out;
}

void check_tile(const Case& c) {
  SCOPED_TRACE(name_of(c));
  const int64_t end = c.pos0 + kTokens; // the pass's end: every row it writes
  AttendHead base;
  const Cache cache = make_cache(c, end, base);
  base.head_dim = c.hk;
  base.v_dim = c.hv;
  base.group = c.group;
  base.softcap = c.capped_with_sinks ? 0.9f : 0.0f;
  base.has_sink = c.capped_with_sinks;
  const std::vector<float> q = test::random_floats(kTokens * c.group * c.hk, 7);
  const std::vector<float> sinks = test::random_floats(kTokens * c.group, 8);
  std::vector<AttendHead> heads(kTokens);
  std::vector<std::vector<float>> scores(kTokens);
  std::vector<float> tiled(kTokens * c.group * c.hv, -1.0f);
  for (int64_t i = 0; i < kTokens; ++i) {
    const int64_t pos = c.pos0 + i;
    AttendHead& a = heads[i];
    a = base;
    a.n_kv = c.view == View::kEncoder ? end : pos + 1;
    a.first = c.view == View::kWindow && pos + 1 > kWindow ? pos + 1 - kWindow : 0;
    a.scale = 0.1f + 0.01f * static_cast<float>(i); // Llama 4's scale moves with position
    a.q = q.data() + i * c.group * c.hk;
    a.sinks = c.capped_with_sinks ? sinks.data() + i * c.group : nullptr;
    a.out = tiled.data() + i * c.group * c.hv;
    scores[i].assign(c.group * a.score_stride(), 0.0f);
    a.scores = scores[i].data();
  }
  attend_tile(heads.data(), kTokens);
  for (int64_t i = 0; i < kTokens; ++i) {
    std::vector<float> alone(c.group * c.hv, -2.0f), own_scores(c.group * heads[i].score_stride());
    AttendHead a = heads[i];
    a.out = alone.data();
    a.scores = own_scores.data();
    attend_head(a);
    ASSERT_EQ(0, std::memcmp(alone.data(), tiled.data() + i * c.group * c.hv,
                             alone.size() * sizeof(float)))
        << "token " << i << " differs from its own call";
  }
}

// A token's own call scores F16 keys straight from the rows on AVX-512 (score_rows), where a
// tile widens them first, so this also holds those two paths to the same bits (groups of 1
// to 4 heads and 4 + 1, rows in pairs and alone).
TEST_P(TileOnIsa, EachTokenOfATileIsItsOwnCall) {
  const std::pair<TensorType, TensorType> types[] = {{TensorType::kF32, TensorType::kF32},
                                                     {TensorType::kF16, TensorType::kF16},
                                                     {TensorType::kQ8_0, TensorType::kQ8_0},
                                                     {TensorType::kF16, TensorType::kQ8_0}};
  for (const auto& [kt, vt] : types)
    for (const auto& [hk, hv] :
         {std::pair<int64_t, int64_t>{64, 64}, {128, 128}, {96, 64}, {72, 40}}) {
      if ((kt == TensorType::kQ8_0 || vt == TensorType::kQ8_0) && (hk % 32 || hv % 32))
        continue; // Q8_0 rows are whole blocks of 32
      for (int64_t group : {1, 2, 3, 5})
        for (Layout layout : {Layout::kContiguous, Layout::kPaged})
          for (View view : {View::kCausal, View::kWindow, View::kEncoder})
            for (int64_t pos0 : {0, 29})
              check_tile({kt, vt, hk, hv, group, layout, view, false, pos0});
      // A sliding window's ring, wrapping inside the tile; soft-capping and sinks.
      for (int64_t pos0 : {0, 29}) {
        check_tile({kt, vt, hk, hv, 2, Layout::kRing, View::kWindow, false, pos0});
        check_tile({kt, vt, hk, hv, 4, Layout::kPaged, View::kWindow, true, pos0});
        check_tile({kt, vt, hk, hv, 3, Layout::kContiguous, View::kCausal, true, pos0});
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Paths, TileOnIsa, testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512),
                         test::isa_param_name);

} // namespace
} // namespace pshard
