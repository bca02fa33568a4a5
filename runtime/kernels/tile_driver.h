// Private, for the ISA files: runs a register-tiled micro-kernel over a range of
// weight rows and all tokens.
//
// A micro-kernel K computes an R x T tile (R weight rows, T tokens) with R * T
// accumulators, loading (and decoding) each weight vector once and using it for
// all T tokens. It provides
//   static constexpr int kRows, kTokens;  // the prefill tile
//   static constexpr int kDecodeRows;     // the tile for a single token
//   template <int R, int T> static void tile(const TileArgs&, int64_t r, int64_t t);
// and must compute each (row, token) element with the same instruction sequence
// whatever R and T are: then edge tiles, decode and prefill all agree bit for bit.
//
// Internal linkage throughout (see kernel_set.h).
#pragma once

#include "runtime/kernels/matmul.h"
#include "runtime/kernels/unroll.h"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace pshard::kernels {
namespace {

struct TileArgs {
  const MatrixView& w;
  const uint8_t* act; // token t's operand at act + t * act_stride
  size_t act_stride;
  float* y;           // element (r, t) at y[t * ldy + r]
  int64_t ldy;
};

using TileFn = void (*)(const TileArgs&, int64_t, int64_t);

// A tile's operands: its R weight rows and its T tokens' packed activations.
template <int R, int T> struct TileOperands {
  const uint8_t* rows[R];
  const uint8_t* xs[T];
  TileOperands(const TileArgs& a, int64_t r, int64_t t) {
    PSHARD_UNROLL
    for (int i = 0; i < R; ++i)
      rows[i] = a.w.data + (r + i) * a.w.row_bytes;
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      xs[j] = a.act + (t + j) * a.act_stride;
  }
};

// Sets every accumulator of an R x T tile to `value`.
template <class V, int R, int T> void fill_tile(V (&acc)[R][T], V value) {
  PSHARD_UNROLL
  for (int i = 0; i < R; ++i)
    PSHARD_UNROLL
    for (int j = 0; j < T; ++j)
      acc[i][j] = value;
}

template <class K> constexpr int max_rows() {
  return K::kRows > K::kDecodeRows ? K::kRows : K::kDecodeRows;
}

template <class K, int I> void tile_at(const TileArgs& a, int64_t r, int64_t t) {
  K::template tile<I / K::kTokens + 1, I % K::kTokens + 1>(a, r, t);
}

// table[(R - 1) * kTokens + (T - 1)] = tile<R, T>
template <class K, int... I> constexpr TileFn tile_table(std::integer_sequence<int, I...>, int i) {
  constexpr TileFn table[] = {&tile_at<K, I>...};
  return table[i];
}

template <class K> TileFn tile_for(int rows, int tokens) {
  return tile_table<K>(std::make_integer_sequence<int, max_rows<K>() * K::kTokens>{},
                       (rows - 1) * K::kTokens + (tokens - 1));
}

// Rows per panel in prefill: the panel's weights stay in L2 while every token
// tile passes over them.
constexpr int64_t kTilePanelRows = 32;

template <class K>
void run_tiles(const MatrixView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t act_stride,
               int64_t n_tokens, float* y, int64_t ldy) {
  const TileArgs args{w, act, act_stride, y, ldy};
  const int64_t row_step = n_tokens == 1 ? K::kDecodeRows : K::kRows;
  // Panels of rows outside, token tiles inside, the panel's row tiles innermost:
  // the panel's weights are read from memory once and stay in L2, and a token
  // tile's activations stay in L1/L2 while the panel's row tiles use them.
  for (int64_t p = r0; p < r1; p += kTilePanelRows) {
    const int64_t p1 = r1 - p < kTilePanelRows ? r1 : p + kTilePanelRows;
    for (int64_t t = 0; t < n_tokens; t += K::kTokens) {
      const int tokens = static_cast<int>(n_tokens - t < K::kTokens ? n_tokens - t : K::kTokens);
      for (int64_t r = p; r < p1; r += row_step) {
        const int rows = static_cast<int>(p1 - r < row_step ? p1 - r : row_step);
        tile_for<K>(rows, tokens)(args, r, t);
      }
    }
  }
}

} // namespace
} // namespace pshard::kernels
