// The draft policy: explores long drafts before any pass is timed, checks many drafted
// tokens where passes of several tokens cost little and drafts are accepted, none where
// they cost more and are rejected, fewer where drafting costs (a draft model's steps), and
// learns acceptance even while checking none.
// (Where every token costs a whole pass, checking never pays: rate(k) <= rate(0).)
#include "runtime/generate/draft_policy.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

TEST(DraftPolicy, TriesTheWholeDraftBeforeAnyPassIsTimed) {
  const DraftPolicy p(8);
  EXPECT_EQ(p.choose(5), 5);
  EXPECT_EQ(p.choose(20), 8);
  EXPECT_EQ(p.choose(0), 0);
  EXPECT_DOUBLE_EQ(p.acceptance(), 0.5);      // no evidence: even odds
  EXPECT_DOUBLE_EQ(p.expected_rate(2), 1.75); // 1 + 1/2 + 1/4 tokens, untimed
  EXPECT_EQ(DraftPolicy(0).choose(5), 0);
}

TEST(DraftPolicy, ChecksLongDraftsWherePassesCostAlikeAndDraftsHold) {
  DraftPolicy p(8);
  for (int n = 1; n <= 9; ++n)
    p.observe_pass(n, 10.0 + 0.1 * n); // weight streaming: tokens are nearly free
  for (int i = 0; i < 20; ++i)
    p.observe_draft(6, true);
  EXPECT_GT(p.acceptance(), 0.8);
  EXPECT_NEAR(p.later_acceptance(), 5.0 / 6.0, 0.02); // 5 of the 6 later ones tried each time
  EXPECT_EQ(p.choose(8), 8);
}

TEST(DraftPolicy, ChecksNoneWhereLongPassesCostMoreAndDraftsFail) {
  DraftPolicy p(8);
  for (int n = 1; n <= 9; ++n)
    p.observe_pass(n, 10.0 + 2.0 * n); // a CPU: each token adds a fifth of a pass
  for (int i = 0; i < 20; ++i)
    p.observe_draft(0, true);
  EXPECT_LT(p.acceptance(), 0.2);
  EXPECT_EQ(p.choose(8), 0);
  // Then the text starts repeating itself: the first drafted token keeps matching the
  // sampled one (compared for free while none is checked), and checking pays again.
  for (int i = 0; i < 80; ++i)
    p.observe_draft(1, false);
  EXPECT_GT(p.acceptance(), 0.9);
  EXPECT_DOUBLE_EQ(p.later_acceptance(), 0.5); // those comparisons never see a later token
  EXPECT_GT(p.choose(8), 0);
}

// A draft model's tokens cost its steps: where passes cost alike and drafts mostly hold,
// free drafting checks the whole draft, a draft token costing half a pass checks fewer,
// and one costing a whole pass none (every checked token would cost what it gains).
TEST(DraftPolicy, DraftingCostShortensTheDraft) {
  auto trained = [] {
    DraftPolicy p(8);
    for (int n = 1; n <= 9; ++n)
      p.observe_pass(n, 10.0 + 0.1 * n);
    for (int i = 0; i < 20; ++i)
      p.observe_draft(4, true); // 4 kept, the 5th rejected
    return p;
  };
  DraftPolicy free = trained(), half = trained(), whole = trained();
  half.observe_drafting(4, 20.0); // 5 ms a token
  whole.observe_drafting(2, 22.0);
  EXPECT_EQ(free.choose(8), 8);
  EXPECT_GT(half.choose(8), 0);
  EXPECT_LT(half.choose(8), free.choose(8));
  EXPECT_EQ(whole.choose(8), 0);
  EXPECT_LT(half.expected_rate(8), free.expected_rate(8));
}

TEST(DraftPolicy, PricesAnUntimedPassLikeTheLargestTimedBelowIt) {
  DraftPolicy p(8);
  p.observe_pass(1, 10);
  EXPECT_DOUBLE_EQ(p.expected_rate(0), 0.1);
  EXPECT_DOUBLE_EQ(p.expected_rate(3), (1 + 0.5 + 0.25 + 0.125) / 10);
  p.observe_pass(4, 40);
  EXPECT_DOUBLE_EQ(p.expected_rate(3), (1 + 0.5 + 0.25 + 0.125) / 40);
  EXPECT_DOUBLE_EQ(p.expected_rate(5), (2 - 1.0 / 32) / 40);
  // A new time moves the average a quarter of the way, and the longer passes' prices
  // with it (as the context grows, every pass slows); nonsense is ignored.
  p.observe_pass(1, 20);
  EXPECT_DOUBLE_EQ(p.expected_rate(0), 1 / 12.5);
  EXPECT_DOUBLE_EQ(p.expected_rate(3), (1 + 0.5 + 0.25 + 0.125) / 50);
  p.observe_pass(1, -1);
  p.observe_pass(12, 5);
  EXPECT_DOUBLE_EQ(p.expected_rate(0), 1 / 12.5);
}

TEST(DraftPolicy, ADraftedPassBeforeAnyOneTokenPassIsPricedOnceOneIs) {
  DraftPolicy p(8);
  p.observe_pass(9, 90);
  EXPECT_GT(p.expected_rate(8), 1.0); // untimed: tokens only, so the draft got tried
  EXPECT_EQ(p.choose(8), 0) << "then a plain pass, to price it";
  p.observe_pass(1, 10);
  EXPECT_DOUBLE_EQ(p.expected_rate(8), (2 - 1.0 / 256) / 90);
}

} // namespace
} // namespace pshard
