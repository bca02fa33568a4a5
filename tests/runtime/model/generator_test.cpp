#include "runtime/generate/generator.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pshard {
namespace {

TEST(TopLogprobsTest, LogSoftmaxOrderAndTies) {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, -2.0f};
  auto top = top_logprobs(logits, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].id, 1);
  EXPECT_EQ(top[1].id, 2); // tie with id 1: the lower id first
  EXPECT_EQ(top[2].id, 0);
  double z = 0;
  for (float l : logits)
    z += std::exp(l);
  EXPECT_NEAR(top[0].logprob, 3.0 - std::log(z), 1e-6);
  EXPECT_NEAR(top[2].logprob, 1.0 - std::log(z), 1e-6);
  EXPECT_EQ(top_logprobs(logits, 10).size(), 4u);
  EXPECT_TRUE(top_logprobs(logits, 0).empty());
}

} // namespace
} // namespace pshard
