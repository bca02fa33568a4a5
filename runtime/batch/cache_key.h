// The names the prefix cache (prefix_cache.h) knows a sequence's positions by: a text
// token by its id; an image's row by a key made from the image's content key and the row,
// always negative, so that no token's id is one. A page's block of names, with its
// parent's, then says what its KV rows were computed from — for an image sequence too,
// whose later positions' M-RoPE positions follow from the images before them.
//
//   e.cache_key = image_row_key(image.key, slot - span.begin);   // an image's row
#pragma once

#include "runtime/tokenizer/token_id.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace pshard {

// No name: a multimodal entry without one ends its sequence's caching (BatchEntry).
inline constexpr TokenId kNoCacheKey = std::numeric_limits<TokenId>::min();

// In [-2^30, -1]: a block of a page's rows collides with another image's only if every
// row's 30-bit key does.
inline TokenId image_row_key(uint64_t image_key, int64_t row) {
  uint64_t x = image_key ^ (static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ull);
  x ^= x >> 33; // splitmix/murmur finaliser: every input bit reaches the low 30
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return -1 - static_cast<TokenId>(x & 0x3fffffffu);
}

// Renames an image's rows [begin, begin + n_rows) in a prompt's names (its tokens to start
// with) by the image's key. An unnamed image (key 0) cuts the names at its start and
// answers false: nothing from there on has a name.
inline bool name_image_rows(std::vector<TokenId>& names, int64_t begin, int64_t n_rows,
                            uint64_t key) {
  if (key == 0) {
    names.resize(static_cast<size_t>(begin));
    return false;
  }
  for (int64_t row = 0; row < n_rows; ++row)
    names[static_cast<size_t>(begin + row)] = image_row_key(key, row);
  return true;
}

} // namespace pshard
