// KvCache with rings (runtime/model/kv_ring.h): a ring layer's rows are its ring's, the
// others the context's; a view maps position p to row p % ring; bad rings are refused.
#include "runtime/model/kv_cache.h"
#include "runtime/model/kv_ring.h"

#include <gtest/gtest.h>
#include <vector>

namespace pshard {
namespace {

TEST(KvCacheRings, RingLayersHoldTheirRingsRows) {
  const std::vector<int64_t> rings = {0, 16, 0, 16};
  auto kv = KvCache::create(4, 64, 32, TensorType::kF16, TensorType::kQ8_0, rings);
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  EXPECT_EQ(kv->bytes(), kv->k_bytes(64 + 16 + 64 + 16) + kv->v_bytes(64 + 16 + 64 + 16));
  EXPECT_EQ(kv->widest_ring(), 16);
  EXPECT_EQ(kv->rows_held(0, 40), 40);
  EXPECT_EQ(kv->rows_held(1, 40), 16);
  EXPECT_EQ(kv->rows_held(1, 9), 9);
  // Layers follow one another: layer 2 starts after layer 1's 16 rows.
  const KvView l1 = kv->layer(1), l2 = kv->layer(2);
  EXPECT_EQ(l1.ring, 16);
  EXPECT_EQ(l2.ring, 0);
  EXPECT_EQ(l2.k, l1.k + kv->k_bytes(16));
  EXPECT_EQ(l1.row_index(37), 5u);
  EXPECT_EQ(l2.row_index(37), 37u);
  EXPECT_EQ(l1.k_row(37), l1.k + 5 * l1.k_row_bytes());
}

TEST(KvCacheRings, ARingNoShorterThanTheContextIsAWholeCache) {
  auto kv =
      KvCache::create(2, 64, 32, TensorType::kF32, TensorType::kF32, std::vector<int64_t>{64, 80});
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->ring(0), 0);
  EXPECT_EQ(kv->ring(1), 0);
  EXPECT_EQ(kv->bytes(), kv->k_bytes(128) + kv->v_bytes(128));
}

// A model that attends both ways keeps nothing past a pass, and its layers run in turn:
// one layer's rows serve them all (no rings).
TEST(KvCacheShared, OneLayersRowsServeEveryLayer) {
  auto kv = KvCache::create(6, 64, 32, TensorType::kF16, TensorType::kF16,
                            std::vector<int64_t>(6, 16), /*one_layer_for_all=*/true);
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  EXPECT_EQ(kv->bytes(), kv->k_bytes(64) + kv->v_bytes(64));
  for (int64_t il = 0; il < 6; ++il) {
    EXPECT_EQ(kv->layer(il).k, kv->layer(0).k);
    EXPECT_EQ(kv->layer(il).v, kv->layer(0).v);
    EXPECT_EQ(kv->ring(il), 0);
    EXPECT_EQ(kv->rows_held(il, 40), 40);
  }
  auto whole = KvCache::create(6, 64, 32, TensorType::kF16, TensorType::kF16);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->bytes(), 6 * kv->bytes());
}

// DeepSeek's latent attention caches values narrower than keys: V rows of their own width,
// sized and laid out by it, and a Q8_0 V row must still be whole blocks.
TEST(KvCacheWidths, ValuesNarrowerThanKeys) {
  auto kv = KvCache::create(3, 64, 96, TensorType::kF16, TensorType::kQ8_0, {}, false, 64);
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  EXPECT_EQ(kv->k_bytes(1), 96u * 2);
  EXPECT_EQ(kv->v_bytes(1), 2u * 34); // two Q8_0 blocks
  EXPECT_EQ(kv->bytes(), kv->k_bytes(3 * 64) + kv->v_bytes(3 * 64));
  const KvView l2 = kv->layer(2);
  EXPECT_EQ(l2.v_values(), 64);
  EXPECT_EQ(l2.v_row_bytes(), 2u * 34);
  EXPECT_EQ(l2.v, kv->layer(0).v + kv->v_bytes(2 * 64));
  EXPECT_FALSE(KvCache::create(3, 64, 96, TensorType::kF16, TensorType::kQ8_0, {}, false, 48).ok())
      << "48 values are not whole Q8_0 blocks";
}

TEST(KvCacheRings, BadRingsAreRefused) {
  EXPECT_FALSE(
      KvCache::create(2, 64, 32, TensorType::kF32, TensorType::kF32, std::vector<int64_t>{16})
          .ok()); // one ring for two layers
  EXPECT_FALSE(
      KvCache::create(2, 64, 32, TensorType::kF32, TensorType::kF32, std::vector<int64_t>{16, -1})
          .ok());
}

TEST(KvRingRule, TheRingHoldsTheWindowAndTheLargestPass) {
  EXPECT_EQ(kv_ring_positions(1024, 256, 32768), 1280); // 1024 + 255, rounded up to 16
  EXPECT_EQ(kv_ring_positions(5, 4, 128), 16);
  EXPECT_EQ(kv_ring_positions(0, 256, 32768), 0);   // no window
  EXPECT_EQ(kv_ring_positions(1024, 256, 1280), 0); // no shorter than the context
  EXPECT_TRUE(kv_ring_serves(1280, 1024, 256));
  EXPECT_FALSE(kv_ring_serves(1264, 1024, 256));
  EXPECT_TRUE(kv_ring_serves(0, 1024, 4096));
  // After 100 positions in a ring of 16 for windows of 5, positions from 84 are held;
  // a rewind to n needs n - 4 of them.
  EXPECT_EQ(kv_ring_rewind_floor(16, 5, 100), 88);
  EXPECT_EQ(kv_ring_rewind_floor(16, 5, 10), 0);
  EXPECT_EQ(kv_ring_rewind_floor(0, 5, 100), 0);
}

} // namespace
} // namespace pshard

namespace pshard {
namespace {

// A recurrent layer (Qwen3-Next's Gated DeltaNet) holds its state's rows whatever the
// context, the attention layers their positions; a view carries the state rows; a rewind
// goes to 0 or stays put, never between.
TEST(KvCacheStates, RecurrentLayersHoldTheirStateRowsWhateverTheContext) {
  const std::vector<int64_t> states = {7, 7, 0};
  auto kv = KvCache::create(3, 64, 32, TensorType::kF16, TensorType::kF16, {}, false, 0, states);
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  EXPECT_EQ(kv->rows_held(0, 1), 7);
  EXPECT_EQ(kv->rows_held(1, 64), 7);
  EXPECT_EQ(kv->rows_held(2, 40), 40);
  EXPECT_EQ(kv->bytes(), kv->k_bytes(7 + 7 + 64) + kv->v_bytes(7 + 7 + 64));
  EXPECT_EQ(kv->layer(1).state_rows, 7);
  EXPECT_EQ(kv->layer(2).state_rows, 0);
  EXPECT_EQ(kv->layer(2).k, kv->layer(1).k + kv->k_bytes(7));
  EXPECT_TRUE(kv->rewind(30, 30).ok());
  EXPECT_TRUE(kv->rewind(0, 30).ok());
  const Status between = kv->rewind(12, 30);
  EXPECT_EQ(between.code(), StatusCode::kOutOfRange);
  EXPECT_NE(between.message().find("rewind to 0"), std::string::npos) << between.message();
  EXPECT_FALSE(KvCache::create(3, 64, 32, TensorType::kF32, TensorType::kF32, {}, false, 0,
                               std::vector<int64_t>{1, -1, 0})
                   .ok());
  // Q8_0 rows of 32 values are 34 bytes: no whole floats for a state.
  const auto q8 =
      KvCache::create(3, 64, 32, TensorType::kQ8_0, TensorType::kQ8_0, {}, false, 0, states);
  ASSERT_FALSE(q8.ok());
  EXPECT_NE(q8.status().message().find("-ctk f16"), std::string::npos) << q8.status().message();
}

} // namespace
} // namespace pshard
