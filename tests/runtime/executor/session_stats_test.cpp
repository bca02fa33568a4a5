// What the session reports about expert-level MoE blocks: the per-pass line, and the hint
// that the text routes unlike the routing profile only when the host clearly ran more
// experts than the plan expected, over enough passes.
#include "runtime/executor/session_stats.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

constexpr const char* kHint = "routes unlike the plan's routing profile";

TEST(ExpertUses, ThePerPassLineAndNothingWithoutExpertLevelBlocks) {
  EXPECT_EQ(describe_expert_uses({}, 0, 10), "");
  EXPECT_EQ(describe_expert_uses({6, 0, 16}, 10.4, 0), "");
  const std::string line = describe_expert_uses({60, 0, 100}, 104, 10);
  EXPECT_NE(line.find("experts per pass 6.0 resident, 0.0 copied, 10.0 on the host "
                      "(predicted 10.4 on the host)"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find(kHint), std::string::npos) << line;
}

TEST(ExpertUses, HintsAtAnotherRoutingProfileOnlyWhenTheHostRanClearlyMore) {
  // The emu moe8x2 decode: 16.4 host experts a pass against 10.4 expected, 48 passes.
  EXPECT_NE(describe_expert_uses({269, 0, 787}, 499.2, 48).find(kHint), std::string::npos);
  // 20 % more: within what a text's own routing scatters.
  EXPECT_EQ(describe_expert_uses({0, 0, 600}, 500, 50).find(kHint), std::string::npos);
  // Too few passes to tell.
  EXPECT_EQ(describe_expert_uses({0, 0, 70}, 40, 4).find(kHint), std::string::npos);
  // Far more in ratio, but less than one expert a pass.
  EXPECT_EQ(describe_expert_uses({0, 0, 12}, 4, 20).find(kHint), std::string::npos);
  // Fewer than expected is good news, not a hint.
  EXPECT_EQ(describe_expert_uses({400, 0, 100}, 500, 50).find(kHint), std::string::npos);
}

} // namespace
} // namespace pshard
