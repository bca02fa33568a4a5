// A KV cache shared by many sequences, in fixed-size pages: for every layer, its count of
// pages of page_tokens K rows and V rows (kv_dim values each, of the pool's KV types) —
// the sliding-window layers' pool may be smaller (window_pages.h). A sequence owns pages
// through its page table (runtime/device/ops.h's paged KvView reads it;
// sequence_pages.h numbers the pages), so memory follows the tokens actually held.
//
//   PSHARD_ASSIGN_OR_RETURN(auto pool, KvPagePool::create(layer_pages, kv_dim, 16));
//   KvView layer3 = pool->layer(3).with_pages(table.data(), n_positions);
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/zeroed_array.h"
#include "runtime/device/ops.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace pshard {

class KvPagePool {
public:
  // layer_pages: per layer, its pages. One entry: one layer's pages serve every layer
  // (a model that attends both ways keeps no keys past a pass, and its layers run one after
  // another). V rows hold v_dim values (0: kv_dim, as K rows). state_rows: per layer, a
  // recurrent layer's rows of one sequence slot's state (model_state_rows; its pages hold
  // every slot's, one after another); empty: none.
  static Result<std::unique_ptr<KvPagePool>>
  create(std::span<const int64_t> layer_pages, int64_t kv_dim, int64_t page_tokens,
         TensorType k_type = TensorType::kF32, TensorType v_type = TensorType::kF32,
         int64_t v_dim = 0, std::span<const int64_t> state_rows = {});

  int64_t page_tokens() const { return page_tokens_; }
  size_t bytes() const { return k_.size() + v_.size(); }

  // Layer `il`'s pool as a paged KvView without a page table (add one with with_pages); a
  // recurrent layer's with its state rows.
  KvView layer(int64_t il);

private:
  KvPagePool() = default;
  int64_t kv_dim_ = 0, v_dim_ = 0, page_tokens_ = 0;
  TensorType k_type_ = TensorType::kF32, v_type_ = TensorType::kF32;
  std::vector<int64_t> row0_;  // per layer, its first row; back(): all rows
  std::vector<int64_t> state_rows_; // per layer (empty: no recurrent layers)
  // [layer][page][row][row bytes]; a page's memory becomes resident when first written
  ZeroedArray<uint8_t> k_, v_;
};

} // namespace pshard
