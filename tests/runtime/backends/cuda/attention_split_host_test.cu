// Flash-decoding's host side (no GPU needed): the split a launch takes
// (plan_attention_split) and the merge arithmetic its second kernel runs
// (attention_merge.cuh, __host__ __device__), checked against attention computed whole.
#include "runtime/backends/cuda/kernels/attention_merge.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace pshard::cuda::kernels {
namespace {

constexpr size_t kScratch = 32ull << 20;

TEST(AttentionSplit, ChunksCoverTheWindowWithinTheScratch) {
  for (int64_t n_head : {8, 32, 128})
    for (int64_t hd : {64, 128, 256})
      for (int64_t tokens : {1, 4, 8})
        for (int64_t pos0 : {0, 100, 255, 256, 4000, 65535, 131071}) {
          const AttentionSplit s = plan_attention_split(n_head, hd, pos0, tokens, kScratch);
          ASSERT_GT(s.chunk, 0) << "decode with room for one chunk splits";
          EXPECT_EQ(s.chunk % kAttentionChunk, 0);
          EXPECT_GE(s.n_chunks * s.chunk, pos0 + tokens) << "every position in a chunk";
          EXPECT_LT((s.n_chunks - 1) * s.chunk, pos0 + tokens) << "no chunk past the window";
          EXPECT_LE(s.n_chunks, kAttentionMaxChunks);
          EXPECT_LE(static_cast<size_t>(s.n_chunks * tokens * n_head * (hd + 2)) * sizeof(float),
                    kScratch);
        }
}

TEST(AttentionSplit, PrefillAndNoScratchRunWhole) {
  EXPECT_EQ(plan_attention_split(32, 128, 5000, kAttentionSplitMaxTokens + 1, kScratch).chunk, 0);
  EXPECT_EQ(plan_attention_split(32, 128, 5000, 1, 0).chunk, 0);
  // Too little scratch for one chunk's partials: whole.
  EXPECT_EQ(plan_attention_split(32, 128, 5000, 8, 8 * 32 * 130 * 4 - 1).chunk, 0);
}

// One (token, head): scores and values over `n` positions, the chunks' partials as the
// split kernel leaves them (its online softmax over tiles gives the same m, l and acc up
// to rounding), merged, against softmax attention in double.
TEST(AttentionSplit, MergingChunkPartialsGivesTheWholeSoftmax) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int64_t hd : {4, 128})
    for (int64_t n : {1, 255, 256, 700})
      for (int64_t chunk : {256, 512}) {
        const int64_t n_chunks = 3; // the last one or two past the window: empty
        std::vector<float> score(n), value(n * hd);
        for (float& x : score)
          x = normal(rng);
        for (float& x : value)
          x = normal(rng);
        std::vector<float> parts(n_chunks * (hd + 2), 0.0f);
        for (int64_t c = 0; c < n_chunks; ++c) {
          float* p = parts.data() + c * (hd + 2);
          float m = -INFINITY, l = 0.0f;
          for (int64_t j = c * chunk; j < std::min(n, (c + 1) * chunk); ++j)
            m = std::fmax(m, score[j]);
          for (int64_t j = c * chunk; j < std::min(n, (c + 1) * chunk); ++j) {
            const float w = std::exp(score[j] - m);
            l += w;
            for (int64_t d = 0; d < hd; ++d)
              p[d] += w * value[j * hd + d];
          }
          p[hd] = m;
          p[hd + 1] = l;
        }
        const MergeScale s = attention_merge_scale(parts.data(), n_chunks, hd);
        ASSERT_TRUE(std::isfinite(s.max) && std::isfinite(s.inv_sum));
        double max = -INFINITY;
        for (float x : score)
          max = std::max<double>(max, x);
        double sum = 0.0;
        for (float x : score)
          sum += std::exp(x - max);
        for (int64_t d = 0; d < hd; ++d) {
          double want = 0.0;
          for (int64_t j = 0; j < n; ++j)
            want += std::exp(score[j] - max) / sum * value[j * hd + d];
          const float got = attention_merge_value(parts.data(), n_chunks, hd, s, d);
          EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::abs(want)))
              << "hd " << hd << " n " << n << " chunk " << chunk << " d " << d;
        }
      }
}

} // namespace
} // namespace pshard::cuda::kernels
