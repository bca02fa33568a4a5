// The grouped MoE dispatch's host arithmetic (no GPU needed): chunks that fit the
// scratch and the launch's route limit, and the expert-table cache's slot choice.
#include "runtime/backends/cuda/moe_grouped_plan.h"

#include <gtest/gtest.h>

namespace pshard::cuda {
namespace {

constexpr size_t kScratch = 32ull << 20;

TEST(MoeChunks, FitTheScratchAndTheRouteLimit) {
  for (bool fused : {true, false})
    for (int64_t k : {1, 2, 8})
      for (int64_t d : {37, 2048, 4096})
        for (int64_t ff : {53, 768, 14336}) {
          const MoeShape s{k, d, ff, fused};
          auto c = plan_moe_chunks(s, kScratch, 65535);
          ASSERT_TRUE(c.ok()) << c.status().to_string();
          EXPECT_GE(c->tokens, 1);
          EXPECT_LE(c->tokens * k, 65535);
          EXPECT_LE(c->floats * sizeof(float), kScratch);
          const size_t routes = static_cast<size_t>(c->tokens * k);
          // The arrays do not overlap and are 256-byte aligned.
          EXPECT_GE(c->out_offset, (fused ? c->act_offset : c->up_offset) + routes * ff);
          if (!fused) {
            EXPECT_GE(c->up_offset, c->act_offset + routes * ff);
          }
          EXPECT_LE(c->out_offset + routes * d, c->floats);
          EXPECT_EQ(c->up_offset % 64, 0u);
          EXPECT_EQ(c->out_offset % 64, 0u);
          // Exactly the chunk's floats are enough for the same chunk.
          auto exact = plan_moe_chunks(s, c->floats * sizeof(float), 65535);
          ASSERT_TRUE(exact.ok());
          EXPECT_EQ(exact->tokens, c->tokens);
        }
}

TEST(MoeChunks, InputRowsOfASplitPassGetTheirOwnArray) {
  for (bool fused : {true, false})
    for (int64_t d : {37, 2048})
      for (int64_t ff : {53, 768}) {
        const MoeShape s{1, d, ff, fused, /*input_rows=*/true};
        auto c = plan_moe_chunks(s, kScratch, 65535);
        ASSERT_TRUE(c.ok()) << c.status().to_string();
        const auto rows = static_cast<size_t>(c->tokens);
        EXPECT_GE(c->in_offset, c->out_offset + rows * d);
        EXPECT_LE(c->in_offset + rows * d, c->floats);
        EXPECT_LE(c->floats * sizeof(float), kScratch);
        EXPECT_EQ(c->in_offset % 64, 0u);
        // The input array costs rows: fewer fit than without it, unless the route
        // limit caps both.
        auto without = plan_moe_chunks({1, d, ff, fused}, kScratch, 65535);
        ASSERT_TRUE(without.ok());
        if (without->tokens < 65535) {
          EXPECT_LT(c->tokens, without->tokens);
        } else {
          EXPECT_LE(c->tokens, without->tokens);
        }
        auto exact = plan_moe_chunks(s, c->floats * sizeof(float), 65535);
        ASSERT_TRUE(exact.ok());
        EXPECT_EQ(exact->tokens, c->tokens);
      }
}

TEST(MoeChunks, TheLargestChunkThatFits) {
  // 1 + 1 floats a route without alignment; with it, each array rounds to 64 floats.
  const MoeShape s{2, 64, 64, true};
  auto c = plan_moe_chunks(s, 128 * 4 * 10, 1 << 20); // 1280 floats
  ASSERT_TRUE(c.ok());
  // tokens t: 2 * (2t * 64) floats <= 1280 -> t <= 5.
  EXPECT_EQ(c->tokens, 5);
  auto capped = plan_moe_chunks(s, kScratch, 7); // 7 routes: 3 tokens of k 2
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->tokens, 3);
}

TEST(MoeChunks, NamesTheShapeWhenOneTokenDoesNotFit) {
  auto c = plan_moe_chunks({8, 4096, 14336, false}, 1 << 19, 65535);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(c.status().message().find("14336"), std::string::npos) << c.status().message();
  EXPECT_FALSE(plan_moe_chunks({0, 64, 64, true}, kScratch, 65535).ok());
}

std::vector<const uint8_t*> table(uintptr_t base, size_t n) {
  std::vector<const uint8_t*> t(n);
  for (size_t i = 0; i < n; ++i)
    t[i] = reinterpret_cast<const uint8_t*>(base + 4096 * i);
  return t;
}

TEST(ExpertTableCache, UploadsOnlyNewTables) {
  ExpertTableCache cache(3 * 8 * 2); // two slots of 3 x 8 addresses
  const auto a = table(1 << 20, 24), b = table(2 << 20, 24), c = table(3 << 20, 24);
  auto s = cache.acquire(a, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->upload);
  EXPECT_EQ(cache.slots(), 2);
  const int64_t slot_a = s->index;
  s = cache.acquire(a, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->upload) << "unchanged table uploaded again";
  EXPECT_EQ(s->index, slot_a);
  s = cache.acquire(b, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->upload);
  EXPECT_NE(s->index, slot_a);
  EXPECT_FALSE(cache.acquire(a, 0)->upload);
  EXPECT_FALSE(cache.acquire(b, 0)->upload);
  // A third table takes the slot written longest ago (a's), so b is still held and a
  // must be uploaded again.
  s = cache.acquire(c, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->upload);
  EXPECT_EQ(s->index, slot_a);
  EXPECT_FALSE(cache.acquire(b, 0)->upload);
  EXPECT_TRUE(cache.acquire(a, 0)->upload);
  // One changed address is a new table.
  auto a2 = a;
  a2[5] = nullptr;
  EXPECT_TRUE(cache.acquire(a2, 0)->upload);
}

TEST(ExpertTableCache, ANewTableSizeStartsOver) {
  ExpertTableCache cache(3 * 1024);
  ASSERT_TRUE(cache.acquire(table(1 << 20, 24), 0).ok());
  EXPECT_EQ(cache.slots(), 128);
  auto s = cache.acquire(table(1 << 20, 384), 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->upload);
  EXPECT_EQ(cache.slots(), 8);
  EXPECT_FALSE(cache.acquire(std::vector<const uint8_t*>(3 * 1025), 0).ok());
}

TEST(ExpertTableCache, SlotsAGraphCapturedAreNeverOverwritten) {
  ExpertTableCache cache(6); // two slots of 3
  const auto a = table(1 << 20, 3), b = table(2 << 20, 3), c = table(3 << 20, 3);
  ASSERT_TRUE(cache.acquire(a, 7).ok()); // captured
  // Eager tables rotate through the one slot left.
  auto s = cache.acquire(b, 0);
  ASSERT_TRUE(s.ok());
  const int64_t free_slot = s->index;
  s = cache.acquire(c, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, free_slot);
  EXPECT_FALSE(cache.acquire(a, 0)->upload) << "the captured table was evicted";
  // A second capture takes the last slot; then nothing can be overwritten.
  ASSERT_TRUE(cache.acquire(b, 8).ok());
  auto full = cache.acquire(table(4 << 20, 3), 0);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().message().find("graph"), std::string::npos);
  // A table already held is still found.
  EXPECT_FALSE(cache.acquire(b, 0)->upload);
  cache.reset();
  EXPECT_TRUE(cache.acquire(table(4 << 20, 3), 0).ok());
}

} // namespace
} // namespace pshard::cuda
