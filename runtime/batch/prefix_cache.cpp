#include "runtime/batch/prefix_cache.h"

namespace pshard {

PrefixCache::PrefixCache(int64_t n_pages) : pages_(static_cast<size_t>(n_pages)) {}

size_t PrefixCache::KeyHash::operator()(const Key& k) const {
  // FNV-1a over the parent, its generation and the tokens.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint32_t>(k.parent));
  mix(k.parent_generation);
  for (TokenId t : k.tokens)
    mix(static_cast<uint32_t>(t));
  return static_cast<size_t>(h);
}

int32_t PrefixCache::find(int32_t parent, uint32_t parent_generation,
                          std::span<const TokenId> tokens) const {
  const auto it = map_.find(Key{parent, parent_generation, {tokens.begin(), tokens.end()}});
  return it == map_.end() ? -1 : it->second;
}

bool PrefixCache::insert(int32_t page, int32_t parent, uint32_t parent_generation,
                         std::span<const TokenId> tokens) {
  PageEntry& p = pages_[static_cast<size_t>(page)];
  if (p.cached)
    return false;
  Key key{parent, parent_generation, {tokens.begin(), tokens.end()}};
  if (!map_.emplace(key, page).second)
    return false;
  p.cached = true;
  p.key = std::move(key);
  return true;
}

void PrefixCache::release(int32_t page) {
  PageEntry& p = pages_[static_cast<size_t>(page)];
  if (!p.cached || p.idle)
    return;
  p.idle_at = lru_.insert(lru_.end(), page);
  p.idle = true;
}

void PrefixCache::acquire(int32_t page) {
  PageEntry& p = pages_[static_cast<size_t>(page)];
  if (!p.idle)
    return;
  lru_.erase(p.idle_at);
  p.idle = false;
}

void PrefixCache::forget(int32_t page) {
  PageEntry& p = pages_[static_cast<size_t>(page)];
  if (!p.cached)
    return;
  if (p.idle)
    lru_.erase(p.idle_at);
  map_.erase(p.key);
  p = PageEntry{};
}

int32_t PrefixCache::evict() {
  if (lru_.empty())
    return -1;
  const int32_t page = lru_.front();
  lru_.pop_front();
  PageEntry& p = pages_[static_cast<size_t>(page)];
  map_.erase(p.key);
  p = PageEntry{};
  return page;
}

} // namespace pshard
