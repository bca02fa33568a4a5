// KvPagePool: each layer its own pages one after another, or (one entry: a model that
// attends both ways, whose keys live for one pass) one layer's pages serving every layer.
#include "runtime/batch/kv_page_pool.h"

#include <gtest/gtest.h>
#include <vector>

namespace pshard {
namespace {

TEST(KvPagePool, LayersFollowOneAnother) {
  auto pool =
      KvPagePool::create(std::vector<int64_t>{4, 2, 4}, 32, 16, TensorType::kF16, TensorType::kF16);
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  const size_t row = tensor_row_bytes(TensorType::kF16, 32);
  EXPECT_EQ((*pool)->bytes(), 2 * 10 * 16 * row);
  EXPECT_EQ((*pool)->layer(1).k, (*pool)->layer(0).k + 4 * 16 * row);
  EXPECT_EQ((*pool)->layer(2).v, (*pool)->layer(1).v + 2 * 16 * row);
}

TEST(KvPagePool, OneLayersPagesServeEveryLayer) {
  auto pool =
      KvPagePool::create(std::vector<int64_t>{4}, 32, 16, TensorType::kF16, TensorType::kQ8_0);
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  EXPECT_EQ((*pool)->bytes(),
            4 * 16 *
                (tensor_row_bytes(TensorType::kF16, 32) + tensor_row_bytes(TensorType::kQ8_0, 32)));
  for (int64_t il : {0, 1, 23}) {
    EXPECT_EQ((*pool)->layer(il).k, (*pool)->layer(0).k);
    EXPECT_EQ((*pool)->layer(il).v, (*pool)->layer(0).v);
    EXPECT_EQ((*pool)->layer(il).v_type, TensorType::kQ8_0);
  }
}

} // namespace
} // namespace pshard
