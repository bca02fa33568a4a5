// Which KV pages hold which prompt blocks, so a sequence whose prompt starts like an
// earlier one reads the earlier one's pages instead of decoding those tokens again
// (automatic prefix caching, as vLLM does it): a full page written by a text-only
// sequence is registered under its tokens and the page before it; a new sequence walks
// its prompt page by page and shares every page found. Shared pages are never written
// again — a sequence only writes positions past its length, and reuse stops at a page
// boundary. A registered page nobody holds stays cached (idle) until its page is needed:
// then the least recently used idle page is evicted.
//
//   PrefixCache cache(n_pages);
//   cache.insert(page, parent, parent_generation, tokens);    // a page filled
//   int32_t page = cache.find(-1, 0, first_block);            // a new prompt's first page
//   cache.release(page);  /* last holder left: idle */        cache.acquire(page);
//   int32_t victim = cache.evict();                           // room for a new page
//
// A page's content changes when it is taken for other positions: SequencePages counts
// that in the page's generation, and a block's key names its parent's generation, so a
// block registered after a parent that has since been reused is never found again.
#pragma once

#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace pshard {

class PrefixCache {
public:
  explicit PrefixCache(int64_t n_pages);

  // The page holding `tokens` right after page `parent` of generation `parent_generation`
  // (parent -1, generation 0: the first block of a prompt), or -1.
  int32_t find(int32_t parent, uint32_t parent_generation, std::span<const TokenId> tokens) const;
  // Registers a full, written page; false (nothing changes) when that block is cached
  // already or the page is.
  bool insert(int32_t page, int32_t parent, uint32_t parent_generation,
              std::span<const TokenId> tokens);
  bool cached(int32_t page) const { return pages_[static_cast<size_t>(page)].cached; }

  // A cached page's last holder left (idle, most recently used) / a holder took it.
  void release(int32_t page);
  void acquire(int32_t page);
  int64_t idle() const { return static_cast<int64_t>(lru_.size()); }
  int64_t size() const { return static_cast<int64_t>(map_.size()); }
  // Forgets the least recently used idle page and returns it; -1 when none is idle.
  int32_t evict();
  // Forgets a held page that its holder is about to write again (a sequence rewound into
  // it, runtime/batch/sequence_pages.h); nothing when it is not cached.
  void forget(int32_t page);

private:
  struct Key {
    int32_t parent = -1;
    uint32_t parent_generation = 0;
    std::vector<TokenId> tokens;
    bool operator==(const Key& o) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct PageEntry {
    bool cached = false;
    Key key;
    std::list<int32_t>::iterator idle_at; // valid while idle
    bool idle = false;
  };

  std::unordered_map<Key, int32_t, KeyHash> map_;
  std::vector<PageEntry> pages_; // per page
  std::list<int32_t> lru_;      // idle cached pages, least recently used first
};

} // namespace pshard
