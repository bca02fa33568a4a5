// Prompt-lookup drafting: the longest context suffix that occurred before, its most
// recent occurrence, the tokens after it up to the limits; nothing without a match.
#include "runtime/generate/prompt_lookup.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

std::vector<TokenId> draft(const std::vector<TokenId>& h, PromptLookup l, int64_t limit = 100) {
  return draft_from_history(h, l, limit);
}

TEST(PromptLookup, DraftsWhatFollowedTheLastEarlierOccurrenceOfTheSuffix) {
  const PromptLookup l{4, 2, 3};
  // Suffix (7, 8) occurred at 1 and at 5; the later one is followed by 1, 2.
  EXPECT_EQ(draft({6, 7, 8, 9, 0, 7, 8, 1, 2, 7, 8}, l), (std::vector<TokenId>{1, 2, 7, 8}));
  // The longest suffix first: (5, 7, 8) matched at 0 beats the later (7, 8) at 6.
  EXPECT_EQ(draft({5, 7, 8, 3, 3, 3, 7, 8, 4, 5, 7, 8}, l), (std::vector<TokenId>{3, 3, 3, 7}));
  // Limited by draft_max, by the caller's limit, and by the end of the history.
  EXPECT_EQ(draft({1, 2, 3, 4, 5, 6, 1, 2}, {2, 2, 2}), (std::vector<TokenId>{3, 4}));
  EXPECT_EQ(draft({1, 2, 3, 4, 5, 6, 1, 2}, l, 1), (std::vector<TokenId>{3}));
  EXPECT_EQ(draft({1, 2, 9, 1, 2}, l), (std::vector<TokenId>{9, 1, 2}));
}

TEST(PromptLookup, PrefersAWholeDraftToOneCutShortByTheEnd) {
  // A run matches itself one token back; further back it supplies a whole draft.
  EXPECT_EQ(draft({5, 5, 5, 5, 5}, {3, 2, 4}), (std::vector<TokenId>{5, 5, 5}));
  EXPECT_EQ(draft({1, 2, 1, 2, 1, 2}, {4, 2, 2}), (std::vector<TokenId>{1, 2, 1, 2}));
  // No whole draft anywhere: the longest cut-short one.
  EXPECT_EQ(draft({7, 5, 5, 5, 5}, {3, 2, 4}), (std::vector<TokenId>{5, 5}));
}

TEST(PromptLookup, DraftsNothingWithoutAMatchOrABudget) {
  const PromptLookup l{4, 2, 4};
  EXPECT_TRUE(draft({1, 2, 3, 4, 5}, l).empty());
  EXPECT_TRUE(draft({1, 2, 3, 1, 9}, l).empty()); // (1, 9) never occurred before
  EXPECT_TRUE(draft({1, 2, 1, 2}, {0, 2, 4}).empty());
  EXPECT_TRUE(draft({1, 2, 1, 2}, l, 0).empty());
  EXPECT_TRUE(draft({}, l).empty());
  EXPECT_TRUE(draft({7}, l).empty());
  // A 1-gram lookup matches the last token's earlier occurrence.
  EXPECT_EQ(draft({4, 5, 6, 4}, {2, 1, 1}), (std::vector<TokenId>{5, 6}));
}

TEST(PromptLookup, RefusesSizesThatCannotWork) {
  EXPECT_TRUE(validate_prompt_lookup({}).ok());
  EXPECT_TRUE(validate_prompt_lookup({8, 1, 1}).ok());
  for (const PromptLookup& bad :
       {PromptLookup{-1, 2, 4}, PromptLookup{4, 0, 4}, PromptLookup{4, 3, 2}}) {
    const Status s = validate_prompt_lookup(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(s.message().empty());
  }
}

} // namespace
} // namespace pshard
