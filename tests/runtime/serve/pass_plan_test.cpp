// plan_pass: decoders first, prompts first-come first-served, the budget kept, turns,
// drafted tokens last, whole prompts whole.
#include "runtime/serve/pass_plan.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

std::vector<std::pair<size_t, int64_t>> flat(const std::vector<PassShare>& shares) {
  std::vector<std::pair<size_t, int64_t>> out;
  for (const PassShare& s : shares)
    out.emplace_back(s.index, s.tokens);
  return out;
}

using Flat = std::vector<std::pair<size_t, int64_t>>;

TEST(PassPlan, DecodersFirstThenPromptsInOrder) {
  const std::vector<PassWant> wants = {{1, true}, {900, false}, {1, true}, {30, false}};
  EXPECT_EQ(flat(plan_pass(wants, 256, 0)), (Flat{{0, 1}, {1, 254}, {2, 1}}));
  EXPECT_EQ(flat(plan_pass(wants, 2000, 0)), (Flat{{0, 1}, {1, 900}, {2, 1}, {3, 30}}));
}

TEST(PassPlan, DecodersTakeTurnsAndLeaveATokenForAWaitingPrompt) {
  const std::vector<PassWant> four = {{1, true}, {1, true}, {1, true}, {1, true}};
  EXPECT_EQ(flat(plan_pass(four, 2, 0)), (Flat{{0, 1}, {1, 1}}));
  EXPECT_EQ(flat(plan_pass(four, 2, 2)), (Flat{{2, 1}, {3, 1}}));
  EXPECT_EQ(flat(plan_pass(four, 2, 3)), (Flat{{0, 1}, {3, 1}}));
  std::vector<PassWant> with_prompt = four;
  with_prompt.push_back({50, false});
  EXPECT_EQ(flat(plan_pass(with_prompt, 3, 0)), (Flat{{0, 1}, {1, 1}, {4, 1}}));
  EXPECT_EQ(flat(plan_pass(with_prompt, 1, 0)), (Flat{{0, 1}})) << "a budget of one decodes";
}

TEST(PassPlan, SequencesThatCannotMoveGetNothing) {
  const std::vector<PassWant> wants = {{0, true}, {0, false}, {5, false}};
  EXPECT_EQ(flat(plan_pass(wants, 8, 0)), (Flat{{2, 5}}));
  EXPECT_TRUE(plan_pass(std::vector<PassWant>{}, 8, 0).empty());
}

TEST(PassPlan, DraftedTokensOnlyFillWhatIsLeft) {
  // Two decoders with drafts of 6 and 3, a prompt of 10: the prompt before any draft.
  const std::vector<PassWant> wants = {{1, true, 6}, {10, false}, {1, true, 3}};
  EXPECT_EQ(flat(plan_pass(wants, 12, 0)), (Flat{{0, 1}, {1, 10}, {2, 1}}));
  EXPECT_EQ(flat(plan_pass(wants, 16, 0)), (Flat{{0, 5}, {1, 10}, {2, 1}}));
  EXPECT_EQ(flat(plan_pass(wants, 16, 1)), (Flat{{0, 2}, {1, 10}, {2, 4}})) << "in rotation";
  EXPECT_EQ(flat(plan_pass(wants, 40, 0)), (Flat{{0, 7}, {1, 10}, {2, 4}}));
  // A decoder that cannot move drafts nothing either.
  const std::vector<PassWant> stuck = {{0, true, 5}, {1, true, 2}};
  EXPECT_EQ(flat(plan_pass(stuck, 10, 0)), (Flat{{1, 3}}));
}

TEST(PassPlan, WholePromptsAreServedWholeOrWait) {
  // Texts of an encoder (one pass each): 40, 30, 20 tokens into passes of 64.
  const std::vector<PassWant> texts = {{40, false, 0, true}, {30, false, 0, true},
                                       {20, false, 0, true}};
  EXPECT_EQ(flat(plan_pass(texts, 64, 0)), (Flat{{0, 40}, {2, 20}}))
      << "the 30 waits, and the 20 after it still fits";
  EXPECT_EQ(flat(plan_pass(texts, 100, 0)), (Flat{{0, 40}, {1, 30}, {2, 20}}));
  EXPECT_TRUE(plan_pass(std::vector<PassWant>{{65, false, 0, true}}, 64, 0).empty())
      << "a text longer than a pass is never split (the scheduler refuses it at submit)";
}

} // namespace
} // namespace pshard
