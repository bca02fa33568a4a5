// The tiled vision attention: bit-identical for every query tile and thread count (the
// key blocks are a kernel constant), close to the untiled two-pass softmax, and its
// scratch independent of the patch count.
#include "runtime/vision/tiled_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace pshard {
namespace {

struct Case {
  int64_t n_tokens, n_head, head_dim;
  bool windowed; // windows of 64 tokens (the last one shorter), else one full run
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.n_tokens << " tokens, " << c.n_head << " x " << c.head_dim
      << (c.windowed ? ", windows" : ", full");
}

struct Inputs {
  std::vector<float> q, k, v;
  std::vector<int64_t> runs;
};

Inputs make_inputs(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  // Spread wide enough that the softmax is peaked and the running max moves across
  // key blocks, the part online softmax can get wrong.
  std::normal_distribution<float> dist(0.0f, 2.0f);
  Inputs in;
  const auto size = static_cast<size_t>(c.n_tokens * c.n_head * c.head_dim);
  for (std::vector<float>* x : {&in.q, &in.k, &in.v}) {
    x->resize(size);
    for (float& f : *x)
      f = dist(rng);
  }
  const int64_t w = c.windowed ? 64 : c.n_tokens;
  for (int64_t b = 0; b < c.n_tokens; b += w)
    in.runs.insert(in.runs.end(), {b, std::min(b + w, c.n_tokens)});
  return in;
}

// The attention of `in` writing to `out`, one tile of `tile` queries.
TiledAttention attention_of(const Case& c, const Inputs& in, std::vector<float>& out,
                            int64_t tile) {
  out.assign(in.q.size(), -1.0f);
  TiledAttention a;
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.out = out.data();
  a.n_head = c.n_head;
  a.head_dim = c.head_dim;
  a.tile = tile;
  a.runs = in.runs;
  return a;
}

void run_with_scratch(const TiledAttention& a, ThreadPool& pool) {
  std::vector<float> scratch(
      static_cast<size_t>(tiled_attention_scratch_floats(a.tile, a.head_dim) * pool.size()));
  tiled_attention(a, scratch.data(), pool.size(), pool);
}

std::vector<float> run_tiled(const Case& c, const Inputs& in, int64_t tile, ThreadPool& pool) {
  std::vector<float> out;
  run_with_scratch(attention_of(c, in, out, tile), pool);
  return out;
}

std::vector<float> run_untiled(const Case& c, const Inputs& in, ThreadPool& pool) {
  std::vector<float> out;
  untiled_attention(attention_of(c, in, out, 1), pool);
  return out;
}

const Case kCases[] = {
    {1, 1, 16, false},   {37, 2, 16, false}, {64, 2, 32, false}, {200, 3, 80, false},
    {333, 2, 40, false}, {200, 3, 80, true}, {333, 2, 40, true}, {1000, 2, 16, true},
};

class TiledAttentionCase : public ::testing::TestWithParam<Case> {};

// Every tile size and thread count gives the same bits: the property that lets plans
// with different attention tiles give identical embeddings.
TEST_P(TiledAttentionCase, EveryTileAndThreadCountGivesTheSameBits) {
  const Case c = GetParam();
  const Inputs in = make_inputs(c, 7);
  ThreadPool one(1), three(3);
  const std::vector<float> ref = run_tiled(c, in, 1, one);
  for (int64_t tile :
       {int64_t{2}, int64_t{7}, int64_t{64}, int64_t{100}, int64_t{256}, c.n_tokens + 5})
    for (ThreadPool* pool : {&one, &three}) {
      const std::vector<float> out = run_tiled(c, in, tile, *pool);
      ASSERT_EQ(std::memcmp(out.data(), ref.data(), ref.size() * sizeof(float)), 0)
          << "tile " << tile << ", " << pool->size() << " threads, " << c.n_tokens << " tokens";
    }
}

// Tiled and untiled agree within float rounding: 1e-5 of the largest output magnitude
// (softmax weights sum to one, so outputs are averages of V rows; the two differ only in
// the order of their sums and the online rescaling).
TEST_P(TiledAttentionCase, AgreesWithTheUntiledAttention) {
  const Case c = GetParam();
  const Inputs in = make_inputs(c, 11);
  ThreadPool pool(2);
  const std::vector<float> tiled = run_tiled(c, in, 64, pool);
  const std::vector<float> untiled = run_untiled(c, in, pool);
  float largest = 0, worst = 0;
  for (size_t i = 0; i < tiled.size(); ++i) {
    largest = std::max(largest, std::fabs(untiled[i]));
    worst = std::max(worst, std::fabs(tiled[i] - untiled[i]));
  }
  ASSERT_GT(largest, 0.0f);
  EXPECT_LE(worst, 1e-5f * largest) << c.n_tokens << " tokens, windowed " << c.windowed;
}

INSTANTIATE_TEST_SUITE_P(Shapes, TiledAttentionCase, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return std::to_string(c.n_tokens) + "tokens_" +
                                  std::to_string(c.n_head) + "x" + std::to_string(c.head_dim) +
                                  (c.windowed ? "_windows" : "_full");
                         });

TEST(TiledAttention, ScratchDependsOnTheTileNotThePatches) {
  // A tile's accumulators, running maxima and sums (the block step's scores live in the
  // kernel).
  EXPECT_EQ(tiled_attention_scratch_bytes(256, 80, 16),
            static_cast<uint64_t>((256 * 80 + 2 * 256) * 16) * sizeof(float));
  EXPECT_LT(tiled_attention_scratch_bytes(64, 80, 1), tiled_attention_scratch_bytes(128, 80, 1));
  // A small image: the tile is cut to its longest run.
  EXPECT_EQ(tiled_attention_scratch_floats(256, 80, 10), 10 * 80 + 2 * 10);
  EXPECT_EQ(tiled_attention_scratch_floats(256, 80, 100), 100 * 80 + 2 * 100);
}

// Run limits (benchmarks): only the first queries of each run are written.
TEST(TiledAttention, MaxQueriesWritesOnlyThoseRows) {
  const Case c{300, 2, 16, false};
  const Inputs in = make_inputs(c, 3);
  ThreadPool pool(2);
  std::vector<float> out;
  TiledAttention a = attention_of(c, in, out, 32);
  a.max_queries = 50;
  run_with_scratch(a, pool);
  const std::vector<float> full = run_tiled(c, in, 32, pool);
  const size_t row = static_cast<size_t>(c.n_head * c.head_dim);
  EXPECT_EQ(std::memcmp(out.data(), full.data(), 50 * row * sizeof(float)), 0);
  EXPECT_EQ(out[50 * row], -1.0f);
}

} // namespace
} // namespace pshard
