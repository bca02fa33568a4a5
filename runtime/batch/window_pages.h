// The KV pages of a batch's sliding-window layers (Gemma 2 and 3, gpt-oss): a query at
// position q of such a layer reads only positions (q - window, q], so a sequence needs
// only the pages of its last window (and of the pass it is running) for those layers —
// the others go back to the pool as the sequence moves on. Their own pool and tables
// then stay a few windows long at any context (vLLM's hybrid KV manager does the same;
// kv_ring.h is the one-sequence equivalent).
//
// A sequence's window table has the full table's indexing (page i: positions
// [i * page_tokens, (i + 1) * page_tokens)); entries below its first held page name page 0,
// never read for these positions, so a kernel that touches them stays inside the pool.
// After a pass a sequence keeps the window of the position kWindowRewindPositions (at
// most the pass) before its end, so a rewind past speculative decoding's drafts still
// finds its window (kv_ring.h); a pass drops the rest when it starts. With the prefix
// cache, a windowed page rides along with the full page of the same index when that one
// is registered: a later prompt that shares the full pages shares the windowed pages of
// its last window too, while they are still cached (idle ones are evicted, least recently
// used first, when a pass needs room).
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/core/status.h"
#include "runtime/model/kv_ring.h" // window_pool_pages: the pool's size

#include <cstdint>
#include <list>
#include <span>
#include <vector>

namespace pshard {

class WindowPages {
public:
  // window 0: no sliding-window layers (every call does nothing). `full_pages`: the
  // full pool's pages (their numbers name cached blocks).
  WindowPages(int64_t window, int64_t max_pass, int64_t page_tokens, int64_t n_pages,
              int64_t full_pages, int64_t max_sequences, int64_t pages_per_sequence);

  bool enabled() const { return window_ > 0; }
  int64_t total_pages() const { return n_pages_; }
  int64_t used_pages() const { return n_pages_ - available(); }
  int32_t* table(SeqId seq) { return tables_.data() + seq * per_seq_; }
  std::span<int32_t> tables() { return tables_; }

  // The first page index a sequence of `length` positions still reads.
  int64_t first_needed(int64_t length) const;
  // Pages a pass from position `start` takes from the pool for a sequence growing to
  // `pages_after` pages, less the ones it drops at the pass's start that become free for
  // others.
  int64_t net_new(SeqId seq, int64_t start, int64_t pages_after) const;
  // The most net_new of the passes that append `n` positions to a sequence at `length`:
  // its last pass's (passes of at most max_pass tokens).
  int64_t append_need(SeqId seq, int64_t length, int64_t n) const;
  int64_t available() const { return static_cast<int64_t>(free_.size() + idle_.size()); }
  // Drops the pages before the window of `length` positions, then takes pages up to
  // index `pages_after` (net_new counted them).
  void take(SeqId seq, int64_t length, int64_t pages_after);
  // Drops the pages before the window of `length` positions (no further than it holds).
  void trim(SeqId seq, int64_t length);
  // Keeps pages [first held, pages) of the sequence and drops the rest (a failed pass, a
  // rewind); a rewind that needs dropped pages is refused (`length` positions kept): one
  // more than kWindowRewindPositions back, or before the last pass's start.
  Status rewind(SeqId seq, int64_t length, int64_t pages);
  void drop_after(SeqId seq, int64_t pages);
  void close(SeqId seq);

  // The sequence's page `index` was registered in the prefix cache as full page `full`
  // of generation `generation`: its windowed page goes with it.
  void link(SeqId seq, int64_t index, int32_t full, uint32_t generation);
  // The sequence will write its page `index` again (a rewind into it): no longer cached.
  void unlink(SeqId seq, int64_t index);
  // A prefix hit: the sequence shares full pages `full` (with their generations); the
  // most of them (from the start) whose last window's windowed pages are all still
  // cached, which it now shares too.
  int64_t share(SeqId seq, std::span<const int32_t> full, std::span<const uint32_t> generations);

  // Rows [0, rows_spanned()) of the windowed pool hold every page in use or cached.
  int64_t rows_spanned() const;

private:
  struct Held {
    int64_t first = 0, end = 0; // pages [first, end) of the table are held
  };
  int32_t take_page();
  void drop_page(int32_t page);
  bool linked(int32_t page, int32_t full, uint32_t generation) const;

  int64_t window_ = 0, max_pass_ = 0, page_tokens_ = 0, n_pages_ = 0, per_seq_ = 0;
  std::vector<Held> held_; // per sequence
  std::vector<int32_t> tables_;
  std::vector<int32_t> free_; // a stack, lowest page on top at first
  std::vector<int32_t> users_;
  // Per windowed page: the full page (and its generation) it is cached with, -1 none.
  std::vector<int32_t> full_;
  std::vector<uint32_t> full_generation_;
  std::vector<int32_t> window_of_; // per full page: the windowed page last linked to it
  std::list<int32_t> idle_;        // cached pages nobody holds, least recently used first
  std::vector<std::list<int32_t>::iterator> idle_at_;
  std::vector<uint8_t> is_idle_;
};

} // namespace pshard
