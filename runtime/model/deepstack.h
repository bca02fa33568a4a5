// DeepStack (Qwen3-VL): an image's vision tower also hands the language model one row per
// image token for each of its first layers, which the model adds to that token's residual
// stream after the layer's last sub-layer (llama.cpp's qwen3vl: after layer k, the k-th
// DeepStack merger's row). Text tokens add nothing; a model taking none (Qwen3.5's
// language model) ignores the rows, as llama.cpp's does.
//
//   DeepstackRow r{row, image.deepstack_row(0, token), image.n_tokens() * n_embd,
//                  image.n_deepstack};
//   if (deepstack_after(subs, i, rows, hp.n_deepstack))
//     add_deepstack_rows(rows, subs[i].layer, hidden, n_embd);
#pragma once

#include "runtime/model/sublayer_list.h"

#include <cstdint>
#include <span>
#include <vector>

namespace pshard {

struct DeepstackRow {
  int64_t row = 0;               // the pass's row (token) it is added to
  const float* values = nullptr; // layer 0's n_embd values (host memory)
  int64_t layer_stride = 0;      // floats from one layer's values to the next
  int64_t layers = 0;            // layers 0 .. layers-1 take a row
};

// Where DecodeExtras' rows come from: an image's DeepStack rows, indexed by the ids that
// index its embeddings.
struct DeepstackTable {
  const float* data = nullptr; // layer k, image token t: data + k * layer_stride + t * n_embd
  int64_t layers = 0, layer_stride = 0;
};

// The rows of a pass whose ids index `table` (every token an image token).
std::vector<DeepstackRow> deepstack_rows(const DeepstackTable& table, std::span<const int32_t> ids,
                                         int64_t n_embd);

// Whether DeepStack rows are added after sub-layer i: `rows` are given and it ends one of
// the model's first `model_layers` layers (the next sub-layer is another layer's or the
// head).
bool deepstack_after(std::span<const SubLayer> subs, size_t i, std::span<const DeepstackRow> rows,
                     int64_t model_layers);

// hidden[r.row] += r's values of `layer`, for the rows that have one.
void add_deepstack_rows(std::span<const DeepstackRow> rows, int64_t layer, float* hidden,
                        int64_t n_embd);

} // namespace pshard
