// The sliding-window layers' own pages inside SequencePages (window_pages.h): a sequence
// holds only the pages of its last window and of the pass it runs, gives the others back
// as it moves on (so a pool of a few windows serves any length), keeps the last pass's
// window for a rewind and refuses one further back, shares a cached prompt's windowed
// pages with its full pages, and shares less when those were evicted.
#include "runtime/batch/sequence_pages.h"

#include <gtest/gtest.h>
#include <numeric>

namespace pshard {
namespace {

constexpr PassLimits kLimits{1000, 64, 4};
constexpr int64_t kPage = 4, kWindow = 6;

// Two sequences of up to 64 positions in pages of 4, a window of 6, passes of up to 8.
SequenceLimits limits(int64_t window_pages) {
  SequenceLimits l{2, 64, kPage, 32};
  l.window = kWindow;
  l.window_pages = window_pages;
  l.max_pass_tokens = 8;
  return l;
}

std::vector<TokenId> tokens(TokenId first, int n) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

Status feed(SequencePages& seqs, SeqId seq, const std::vector<TokenId>& t) {
  std::vector<BatchEntry> pass;
  for (size_t i = 0; i < t.size(); ++i)
    pass.push_back({seq, t[i], i + 1 == t.size()});
  PSHARD_ASSIGN_OR_RETURN(AssembledPass p, seqs.assemble(pass, kLimits));
  seqs.take_pages(p);
  EXPECT_EQ(p.window_segments.size(), p.segments.size());
  seqs.advance(p);
  return Status::ok_status();
}

const int32_t* window_table(SequencePages& seqs, SeqId seq) {
  return seqs.window_tables().data() + seq * seqs.pages_per_sequence();
}

TEST(WindowPages, ThePoolHoldsEveryWindowAndOnePass) {
  // Each sequence: a window of 6 and the rewind margin, 6 - 1 + 65 positions (18 pages of
  // 4, two more where they straddle); and the pass's 8 tokens, 2 pages.
  EXPECT_EQ(window_pool_pages(kWindow, kPage, 8, 2, 1000), 2 * (18 + 2) + 2);
  EXPECT_EQ(window_pool_pages(kWindow, kPage, 8, 2, 6), 6) << "never more than the full pool";
  EXPECT_EQ(window_pool_pages(128, 16, 512, 4, 1 << 20), 4 * (12 + 2) + 32); // gpt-oss's
}

TEST(WindowPages, ASequenceHoldsOnlyItsLastWindowsPages) {
  SequencePages seqs(limits(window_pool_pages(kWindow, kPage, 8, 2, 32)));
  EXPECT_EQ(seqs.window_tables().size(), 2u * 16u);
  ASSERT_TRUE(seqs.windowed());
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(feed(seqs, *a, tokens(1, 8)).ok());
  EXPECT_EQ(seqs.stats().window_used_pages, 2);
  for (int i = 0; i < 32; ++i)
    ASSERT_TRUE(feed(seqs, *a, {static_cast<TokenId>(100 + i)}).ok());
  // 40 positions: the last pass (from 39) read positions 34..39, pages 8 and 9.
  EXPECT_EQ(seqs.stats().used_pages, 10);
  EXPECT_EQ(seqs.stats().window_used_pages, 2);
  const int32_t* t = window_table(seqs, *a);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(t[i], 0) << "page " << i << " was given back: its entry names page 0";
  EXPECT_NE(t[8], t[9]);
  EXPECT_LE(seqs.window_rows_spanned(), 10 * kPage);
  seqs.close(*a);
  EXPECT_EQ(seqs.stats().window_used_pages, 0);
}

TEST(WindowPages, APoolOfOneWindowServesAnyLength) {
  // Decoding one token a pass reads 6 positions: 3 pages at most, and the pass that
  // takes a new page gives an old one back.
  SequenceLimits l = limits(3);
  l.max_pass_tokens = 1;
  SequencePages seqs(l);
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(seqs.can_append(*a, 1)) << "position " << i;
    const Status st = feed(seqs, *a, {static_cast<TokenId>(i)});
    ASSERT_TRUE(st.ok()) << "position " << i << ": " << st.to_string();
  }
  EXPECT_LE(seqs.stats().window_used_pages, 3);
}

TEST(WindowPages, APassNeedingMoreWindowPagesThanFreeIsRefused) {
  SequencePages seqs(limits(4));
  auto a = seqs.open(), b = seqs.open();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(feed(seqs, *a, tokens(1, 8)).ok()); // 2 window pages
  EXPECT_TRUE(seqs.can_append(*b, 8));
  EXPECT_FALSE(seqs.can_append(*b, 9)) << "a pass of 8 from 1 touches 3 pages, 2 are free";
  std::vector<BatchEntry> pass;
  for (int i = 0; i < 9; ++i)
    pass.push_back({*b, i, i == 8});
  auto p = seqs.assemble(pass, kLimits);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(p.status().message().find("sliding-window"), std::string::npos)
      << p.status().message();
  EXPECT_EQ(seqs.length(*b), 0) << "nothing changed";
}

TEST(WindowPages, ARewindKeepsTheLastPassesWindowAndRefusesOneFurther) {
  SequencePages seqs(limits(10));
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  const std::vector<TokenId> all = tokens(1, 40);
  ASSERT_TRUE(feed(seqs, *a, {all.begin(), all.begin() + 32}).ok());
  ASSERT_TRUE(feed(seqs, *a, {all.begin() + 32, all.end()}).ok()); // from 32: pages 6..9
  EXPECT_TRUE(seqs.rewind(*a, {all.begin(), all.begin() + 33}).ok());
  EXPECT_TRUE(seqs.rewind(*a, {all.begin(), all.begin() + 32}).ok()) << "the pass's start";
  const Status st = seqs.rewind(*a, {all.begin(), all.begin() + 20});
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("--swa-full"), std::string::npos) << st.message();
  EXPECT_EQ(seqs.length(*a), 32) << "a refused rewind changes nothing";
  ASSERT_TRUE(feed(seqs, *a, {all.begin() + 32, all.end()}).ok());
  EXPECT_TRUE(seqs.rewind(*a, {}).ok()) << "back to nothing starts afresh";
  EXPECT_EQ(seqs.stats().window_used_pages, 0);
  EXPECT_TRUE(feed(seqs, *a, tokens(1, 5)).ok());
  // Decoding one token a pass keeps one position's margin (and the rest of its page): at
  // 17 positions pages 2 on are held, so a rewind to 16 is fine, to 12 (whose window starts
  // at 7, page 1) is not.
  for (int i = 0; i < 12; ++i)
    ASSERT_TRUE(feed(seqs, *a, {static_cast<TokenId>(10 + i)}).ok());
  std::vector<TokenId> fed = tokens(1, 5);
  for (int i = 0; i < 12; ++i)
    fed.push_back(static_cast<TokenId>(10 + i));
  EXPECT_EQ(seqs.rewind(*a, {fed.begin(), fed.end() - 5}).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(seqs.rewind(*a, {fed.begin(), fed.end() - 1}).ok());
}

TEST(WindowPages, ACachedPromptSharesTheWindowPagesOfItsEnd) {
  SequencePages seqs(limits(10));
  const std::vector<TokenId> prompt = tokens(1, 21); // 5 whole pages, then one token
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(feed(seqs, *a, {prompt.begin(), prompt.begin() + 8}).ok());
  ASSERT_TRUE(feed(seqs, *a, {prompt.begin() + 8, prompt.begin() + 16}).ok());
  ASSERT_TRUE(feed(seqs, *a, {prompt.begin() + 16, prompt.end()}).ok());
  // Its last pass started at 16: window pages 2 (positions 11..) to 5 held.
  const std::vector<int32_t> held(window_table(seqs, *a) + 2, window_table(seqs, *a) + 6);
  seqs.close(*a);
  EXPECT_EQ(seqs.stats().window_used_pages, 0);
  auto b = seqs.open_with_prefix(prompt);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->reused, 20);
  // The next pass (from 20) reads positions 15..: pages 3 and 4, a's.
  const int32_t* t = window_table(seqs, b->seq);
  EXPECT_EQ(t[3], held[1]);
  EXPECT_EQ(t[4], held[2]);
  EXPECT_EQ(seqs.stats().window_used_pages, 2);
  EXPECT_TRUE(feed(seqs, b->seq, {21}).ok());
}

TEST(WindowPages, EvictedWindowPagesShortenTheSharedStart) {
  SequencePages seqs(limits(5));
  const std::vector<TokenId> prompt = tokens(1, 21);
  auto a = seqs.open();
  ASSERT_TRUE(a.ok());
  for (size_t at = 0; at < prompt.size(); at += 4)
    ASSERT_TRUE(feed(seqs, *a, {prompt.begin() + at,
                                prompt.begin() + std::min(at + 4, prompt.size())})
                    .ok());
  seqs.close(*a); // its window pages 3..5 stay cached, idle
  auto c = seqs.open();
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(feed(seqs, *c, tokens(500, 8)).ok()); // 2 free pages and one idle, evicted
  ASSERT_TRUE(feed(seqs, *c, tokens(600, 8)).ok());
  auto b = seqs.open_with_prefix(prompt);
  ASSERT_TRUE(b.ok());
  // Its full pages are all cached, but every shorter start's window reaches a window page
  // c's passes evicted (they went least recently used first: the prompt's start's).
  EXPECT_EQ(b->reused, 0);
  EXPECT_EQ(seqs.length(b->seq), 0);
  EXPECT_GT(seqs.stats().cached_pages, 0);
  seqs.close(*c);
  for (size_t at = 0; at < prompt.size(); at += 4)
    ASSERT_TRUE(feed(seqs, b->seq,
                     {prompt.begin() + at, prompt.begin() + std::min(at + 4, prompt.size())})
                    .ok());
}

} // namespace
} // namespace pshard
