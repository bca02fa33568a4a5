// SequencePages: sequences and the KV pages they own — a pass is checked whole before
// anything changes, pages follow the positions held and come back when a sequence
// closes or a pass fails, and the page tables sit where a device can map them.
#include "runtime/batch/sequence_pages.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

constexpr PassLimits kLimits{100, 32, 4};

TEST(SequencePages, PagesFollowThePositionsHeld) {
  SequencePages seqs({2, 20, 4, 8});
  auto a = seqs.open(), b = seqs.open();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(seqs.open().ok()) << "two sequences at most";
  std::vector<BatchEntry> pass;
  for (int i = 0; i < 5; ++i)
    pass.push_back({*a, i, i == 4});
  pass.push_back({*b, 7, true});
  auto p = seqs.assemble(pass, kLimits);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->new_pages, 3); // a: 5 positions in pages of 4, b: 1
  EXPECT_EQ(p->longest, 5);
  EXPECT_EQ(p->logit_rows, (std::vector<int64_t>{4, 5}));
  seqs.take_pages(*p);
  seqs.advance(*p);
  EXPECT_EQ(seqs.length(*a), 5);
  EXPECT_EQ(seqs.stats().used_pages, 3);
  EXPECT_EQ(seqs.rows_spanned(), 12);
  const int32_t* table_a = seqs.tables().data() + *a * seqs.pages_per_sequence();
  EXPECT_EQ(p->segments[0].pages, table_a);
  EXPECT_NE(table_a[0], table_a[1]);
  seqs.close(*a);
  EXPECT_EQ(seqs.stats().used_pages, 1);
  EXPECT_EQ(seqs.length(*a), -1);
}

TEST(SequencePages, ABadPassChangesNothing) {
  SequencePages seqs({2, 8, 4, 3});
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  const std::vector<std::vector<BatchEntry>> bad = {
      {},                                         // empty
      {{*a + 1, 1, true}},                        // not open
      {{*a, 100, true}},                          // outside the vocabulary
      std::vector<BatchEntry>(9, {*a, 1, false}), // past the context
      std::vector<BatchEntry>(5, {*a, 1, true}),  // more logits rows than allowed
  };
  for (const auto& pass : bad)
    EXPECT_FALSE(seqs.assemble(pass, kLimits).ok());
  auto b = seqs.open();
  ASSERT_TRUE(b.ok());
  std::vector<BatchEntry> both(8, {*a, 1, false});
  both.push_back({*b, 1, true}); // 2 + 1 pages, 3 free: fits
  auto p = seqs.assemble(both, kLimits);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  both.push_back({*b, 1, false});
  both.insert(both.end(), 4, {*b, 1, false}); // b needs 2 pages: 4 in all
  EXPECT_EQ(seqs.assemble(both, kLimits).status().code(), StatusCode::kOutOfMemory);
  EXPECT_EQ(seqs.stats().used_pages, 0);
  EXPECT_FALSE(seqs.can_append(*b, 13));
}

TEST(SequencePages, AFailedPassGivesItsNewPagesBack) {
  SequencePages seqs({1, 16, 4, 4});
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  auto first = seqs.assemble(std::vector<BatchEntry>(3, {*a, 1, false}), kLimits);
  ASSERT_TRUE(first.ok());
  seqs.take_pages(*first);
  seqs.advance(*first);
  auto second = seqs.assemble(std::vector<BatchEntry>(6, {*a, 2, false}), kLimits);
  ASSERT_TRUE(second.ok());
  seqs.take_pages(*second);
  EXPECT_EQ(seqs.stats().used_pages, 3);
  seqs.release_unwritten(*second);
  EXPECT_EQ(seqs.stats().used_pages, 1) << "the page of the 3 positions held stays";
  EXPECT_EQ(seqs.length(*a), 3);
}

} // namespace
} // namespace pshard
