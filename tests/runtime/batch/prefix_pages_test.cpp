// The prefix cache inside SequencePages: full pages of a text sequence are registered as
// they fill and shared by a later prompt that starts the same way — whole pages only,
// never the prompt's last token, kept after their sequence closes, evicted least recently
// used when a pass needs room (a chain's later pages first), never reached through a
// parent page that has since been reused for other tokens, and never for a sequence that
// carried an image's rows.
#include "runtime/batch/sequence_pages.h"

#include <gtest/gtest.h>
#include <numeric>

namespace pshard {
namespace {

constexpr PassLimits kLimits{1000, 64, 4};
constexpr int64_t kPage = 4;

std::vector<TokenId> tokens(TokenId first, int n) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::vector<TokenId> concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Feeds `t` to `seq` in one pass (the last entry with logits).
void feed(SequencePages& seqs, SeqId seq, const std::vector<TokenId>& t,
          const float* embedding = nullptr) {
  std::vector<BatchEntry> pass;
  for (size_t i = 0; i < t.size(); ++i)
    pass.push_back({seq, t[i], i + 1 == t.size(), embedding});
  auto p = seqs.assemble(pass, kLimits);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  seqs.take_pages(*p);
  seqs.advance(*p);
}

const int32_t* table(SequencePages& seqs, SeqId seq) {
  return seqs.tables().data() + seq * seqs.pages_per_sequence();
}

TEST(PrefixPages, ALaterPromptSharesTheWholePagesOfItsCachedStart) {
  SequencePages seqs({3, 32, kPage, 16});
  const auto prompt = tokens(10, 10); // pages [10..13] [14..17], then 2 more tokens
  auto a = seqs.open_with_prefix(prompt);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->reused, 0) << "nothing cached yet";
  feed(seqs, a->seq, prompt);
  EXPECT_EQ(seqs.stats().cached_pages, 2) << "the two full pages";

  auto b = seqs.open_with_prefix(concat(prompt, tokens(500, 7)));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->reused, 8);
  EXPECT_EQ(seqs.length(b->seq), 8);
  EXPECT_EQ(table(seqs, b->seq)[0], table(seqs, a->seq)[0]);
  EXPECT_EQ(table(seqs, b->seq)[1], table(seqs, a->seq)[1]);
  EXPECT_EQ(seqs.stats().used_pages, 3) << "shared pages count once";

  // Exactly the cached pages: the last token is decoded again, so one page fewer.
  auto c = seqs.open_with_prefix(tokens(10, 8));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->reused, 4);
  // A prompt that differs inside the second page shares the first only.
  seqs.close(c->seq);
  auto d = seqs.open_with_prefix(concat(tokens(10, 5), tokens(900, 6)));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->reused, 4);
  seqs.close(d->seq);
  auto e = seqs.open_with_prefix(tokens(11, 12)); // starts one token later: nothing
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->reused, 0);
}

TEST(PrefixPages, PagesOutliveTheirSequenceAndGiveWayWhenAPassNeedsRoom) {
  SequencePages seqs({2, 32, kPage, 4});
  auto a = seqs.open_with_prefix(tokens(1, 12));
  ASSERT_TRUE(a.ok());
  feed(seqs, a->seq, tokens(1, 12)); // pages 1-3 full and cached
  seqs.close(a->seq);
  EXPECT_EQ(seqs.stats().used_pages, 0) << "idle cached pages are free to take";
  EXPECT_EQ(seqs.stats().cached_pages, 3);
  EXPECT_EQ(seqs.rows_spanned(), 12) << "a residency move keeps the cached rows";
  EXPECT_TRUE(seqs.can_append(seqs.open().value(), 16)) << "all four pages available";
  seqs.close(1);

  // Another text needing three pages: the free page, then the chain's last pages first.
  auto b = seqs.open_with_prefix(tokens(100, 12));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->reused, 0);
  feed(seqs, b->seq, tokens(100, 9)); // 3 pages: the free one and two evicted
  seqs.close(b->seq);
  auto again = seqs.open_with_prefix(tokens(1, 13));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->reused, 4) << "the first page of the old chain survived, the later went";
}

TEST(PrefixPages, ABlockAfterAReusedParentIsNeverFound) {
  // Two sequences write the same first block at once: the second's copy is not
  // registered (the first's is), but its next page is, under the second's page.
  SequencePages seqs({3, 32, kPage, 8});
  auto a = seqs.open(), b = seqs.open();
  ASSERT_TRUE(a.ok() && b.ok());
  feed(seqs, *a, tokens(1, 4));
  feed(seqs, *b, concat(tokens(1, 4), tokens(50, 4)));
  const int32_t b_first = table(seqs, *b)[0];
  EXPECT_EQ(seqs.stats().cached_pages, 2); // a's block 1, b's block 2 (after b's own page)
  seqs.close(*a);
  seqs.close(*b); // b's first page goes to the free list: it was never registered
  // A sequence takes that page (the top of the free stack) for another first block, which
  // is registered there; b's second block still names that page as its parent.
  auto c = seqs.open();
  ASSERT_TRUE(c.ok());
  feed(seqs, *c, tokens(70, 4));
  ASSERT_EQ(table(seqs, *c)[0], b_first) << "the test needs b's old page reused";
  auto d = seqs.open_with_prefix(concat(tokens(70, 4), concat(tokens(50, 4), {9})));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->reused, 4) << "block 50.. was written after tokens 1..4, not 70..";
}

TEST(PrefixPages, ASequenceWithAnImageRegistersNothingFromItOn) {
  SequencePages seqs({2, 32, kPage, 8});
  auto a = seqs.open_with_prefix(tokens(1, 9));
  ASSERT_TRUE(a.ok());
  feed(seqs, a->seq, tokens(1, 4)); // a text page: registered
  const std::vector<float> row(8, 0.5f);
  feed(seqs, a->seq, tokens(5, 4), row.data()); // an image's rows
  feed(seqs, a->seq, tokens(9, 4));
  EXPECT_EQ(seqs.stats().cached_pages, 1);
  auto b = seqs.open_with_prefix(tokens(1, 13));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->reused, 4);
}

TEST(PrefixPages, OffSharesNothing) {
  SequencePages seqs({2, 32, kPage, 8, /*prefix_cache=*/false});
  auto a = seqs.open_with_prefix(tokens(1, 9));
  ASSERT_TRUE(a.ok());
  feed(seqs, a->seq, tokens(1, 9));
  EXPECT_EQ(seqs.stats().cached_pages, 0);
  auto b = seqs.open_with_prefix(tokens(1, 9));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->reused, 0);
}

// Speculative decoding's rewind: the sequence keeps its first positions, pages past them
// go back (still cached: their rows are right for their tokens), and a page it will
// write again leaves the cache — so a later prompt finds only blocks whose rows hold.
TEST(PrefixPages, ARewoundSequenceKeepsItsCacheTrue) {
  SequencePages seqs({3, 32, kPage, 16});
  auto a = seqs.open_with_prefix(tokens(10, 6));
  ASSERT_TRUE(a.ok());
  feed(seqs, a->seq, tokens(10, 6)); // [10..13] cached, [14 15] filling
  feed(seqs, a->seq, tokens(16, 7)); // drafted: [14..17] [18..21] cached, [22]
  EXPECT_EQ(seqs.length(a->seq), 13);
  EXPECT_EQ(seqs.stats().cached_pages, 3);
  const int32_t second = table(seqs, a->seq)[1];
  // Only 16 and 17 held: back to 8 positions, on a page boundary.
  ASSERT_TRUE(seqs.rewind(a->seq, tokens(10, 8)).ok());
  EXPECT_EQ(seqs.length(a->seq), 8);
  EXPECT_EQ(table(seqs, a->seq)[2], -1) << "the pages past the new length go back";
  EXPECT_EQ(table(seqs, a->seq)[1], second) << "a whole kept page stays";
  EXPECT_EQ(seqs.stats().used_pages, 2);
  EXPECT_EQ(seqs.stats().cached_pages, 3) << "the dropped full page stays cached";
  // Into a page: 6 positions, the second page written again from its 3rd row.
  ASSERT_TRUE(seqs.rewind(a->seq, tokens(10, 6)).ok());
  EXPECT_EQ(seqs.stats().cached_pages, 2)
      << "the page it will write is out (the page after it, dropped before, stays idle: its "
         "key names the old page, so nothing finds it, and it goes first when room is needed)";
  auto probe = seqs.open_with_prefix(tokens(10, 13));
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->reused, 4) << "only the first page is still the block it was";
  seqs.close(probe->seq);
  // The sequence goes on with other tokens; its page registers under them when full.
  const std::vector<TokenId> other = {70, 71, 72, 73, 74};
  feed(seqs, a->seq, other); // [14 15 70 71] full, [72 73 74]
  auto c = seqs.open_with_prefix(concat(tokens(10, 6), other));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->reused, 8) << "the rewritten page registers under its new tokens";
  seqs.close(c->seq);
  // Bad rewinds change nothing.
  EXPECT_EQ(seqs.rewind(a->seq, tokens(0, 30)).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(seqs.rewind(2, tokens(0, 1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(seqs.length(a->seq), 11);
}

TEST(PrefixPages, ARewindIntoAPageTakesThePagesAfterItOutOfTheCache) {
  SequencePages seqs({2, 32, kPage, 16});
  auto a = seqs.open_with_prefix(tokens(10, 13));
  ASSERT_TRUE(a.ok());
  feed(seqs, a->seq, tokens(10, 13)); // three full pages cached, one filling
  EXPECT_EQ(seqs.stats().cached_pages, 3);
  ASSERT_TRUE(seqs.rewind(a->seq, tokens(10, 5)).ok());
  EXPECT_EQ(seqs.stats().cached_pages, 1) << "the second page and the third after it";
  EXPECT_EQ(seqs.stats().used_pages, 2);
  EXPECT_TRUE(seqs.can_append(a->seq, 27)) << "the third page is free again";
}

TEST(PrefixPages, ARewindIntoAnUnregisteredPageStillOrphansTheBlocksAfterIt) {
  // b's first page is a copy of a's (not registered), its second page is registered
  // under it; b rewinds into its first page and fills it with other tokens, which now
  // register: the old second block must not be found after them.
  SequencePages seqs({3, 32, kPage, 8});
  auto a = seqs.open(), b = seqs.open();
  ASSERT_TRUE(a.ok() && b.ok());
  feed(seqs, *a, tokens(10, 4));
  feed(seqs, *b, tokens(10, 8));
  ASSERT_EQ(seqs.stats().cached_pages, 2) << "a's first block, b's second";
  ASSERT_TRUE(seqs.rewind(*b, tokens(10, 2)).ok());
  feed(seqs, *b, {90, 91});
  auto probe = seqs.open_with_prefix(concat({10, 11, 90, 91}, concat(tokens(14, 4), {99})));
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->reused, 4) << "block 14.. was written after 12, 13, not 90, 91";
}

TEST(PrefixPages, ARewindNeverWritesASharedPage) {
  SequencePages seqs({3, 32, kPage, 16});
  auto a = seqs.open_with_prefix(tokens(10, 9));
  ASSERT_TRUE(a.ok());
  feed(seqs, a->seq, tokens(10, 9));
  auto b = seqs.open_with_prefix(tokens(10, 9)); // shares a's two full pages
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->reused, 8);
  const Status s = seqs.rewind(b->seq, tokens(10, 6));
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.to_string();
  EXPECT_EQ(seqs.length(b->seq), 8);
  EXPECT_TRUE(seqs.rewind(b->seq, tokens(10, 4)).ok())
      << "to a page boundary writes nothing shared";
}

} // namespace
} // namespace pshard
