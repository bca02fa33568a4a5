// Sliding-window layers (Gemma 2/3, gpt-oss, Mistral's first models) read only their last
// `window` positions, so one sequence's cache of such a layer is a ring: position p at
// row p % ring (KvView::ring), the ring long enough for the widest window and the largest
// pass. A pass writes all its rows before its first query reads, so a ring of
// window + tokens - 1 rows still holds every position any query of the pass sees. The
// compiler sizes device caches and prices their moves with the same numbers, and the
// artifact records the ring (schedule.fbs, kv_ring_positions); at 64K a gpt-oss-20b
// cache shrinks by half, a Gemma 3 one by five sixths.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pshard {

inline constexpr int64_t kKvRingAlign = 16; // rows: rings of nearby shapes one size

// The ring's rows for windows up to `widest_window` and passes of up to
// `max_pass_tokens` tokens; 0 (whole caches) without a window, or where the ring would
// be no shorter than the context.
inline int64_t kv_ring_positions(int64_t widest_window, int64_t max_pass_tokens, int64_t n_ctx) {
  if (widest_window <= 0 || max_pass_tokens <= 0)
    return 0;
  const int64_t need = widest_window + max_pass_tokens - 1;
  const int64_t ring = (need + kKvRingAlign - 1) / kKvRingAlign * kKvRingAlign;
  return ring < n_ctx ? ring : 0;
}

// Does a ring of `ring` rows serve windows up to `widest_window` in passes of up to
// `max_pass_tokens` (0: no ring, always)?
inline bool kv_ring_serves(int64_t ring, int64_t widest_window, int64_t max_pass_tokens) {
  return ring == 0 || ring >= widest_window + max_pass_tokens - 1;
}

// Rows a cache keeps for `positions` cached positions: all of them, or the ring's.
inline int64_t kv_rows_held(int64_t ring, int64_t positions) {
  return ring > 0 ? std::min(ring, positions) : positions;
}

// The KV bytes a move between plans copies with `positions` cached: caches of
// `per_position` bytes a position in all, `ring_per_position` of them in rings of `ring`
// rows, which move at most that many positions.
inline uint64_t kv_bytes_moved(uint64_t per_position, uint64_t ring_per_position, int64_t positions,
                               int64_t ring) {
  const int64_t all = std::max<int64_t>(positions, 0);
  return (per_position - ring_per_position) * static_cast<uint64_t>(all) +
         ring_per_position * static_cast<uint64_t>(kv_rows_held(ring, all));
}

// Several sequences in a batch engine's page pool: the sliding-window layers have a pool of
// their own (runtime/batch/window_pages.h). Between passes a sequence holds the pages of
// its window and of the last kWindowRewindPositions positions before it (a rewind past
// speculative decoding's drafts goes no further back: 1 + 64 drafted tokens); a pass also
// holds its own tokens' pages. kKvPageTokens: the engines' default page.
inline constexpr int64_t kKvPageTokens = 16;
inline constexpr int64_t kWindowRewindPositions = 65;

// That pool's pages for `max_sequences` sequences reading windows of `window` positions
// in passes of up to `max_pass` tokens in all: each sequence's window and rewind margin
// (the pages that span touches, two more at its ends), and the pass's tokens; at most
// `full_pages`, which hold the same positions for every layer.
inline int64_t window_pool_pages(int64_t window, int64_t page_tokens, int64_t max_pass,
                                 int64_t max_sequences, int64_t full_pages) {
  const int64_t held = window - 1 + kWindowRewindPositions;
  const int64_t per_sequence = (held + page_tokens - 1) / page_tokens + 2;
  const int64_t pass = (max_pass + page_tokens - 1) / page_tokens;
  return std::min(full_pages, max_sequences * per_sequence + pass);
}

// The smallest n_past a ring can rewind to (besides 0, which starts afresh): the next
// query's window must still be in it, and every position up to `reached` (the most the
// cache held since it last started afresh, dropped ones too) has overwritten the row
// `ring` positions before it.
inline int64_t kv_ring_rewind_floor(int64_t ring, int64_t widest_window, int64_t reached) {
  return ring > 0 ? std::max<int64_t>(reached - ring + widest_window - 1, 0) : 0;
}

} // namespace pshard
