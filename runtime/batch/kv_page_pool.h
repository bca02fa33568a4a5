// A KV cache shared by many sequences, in fixed-size pages: for every layer, n_pages pages
// of page_tokens K rows and V rows (kv_dim values each, of the pool's KV types). A sequence owns pages through its
// page table (runtime/device/ops.h's paged KvView reads it); pages are taken as sequences
// grow and given back when they end, so memory follows the tokens actually held, not
// max_sequences x n_ctx.
//
//   PSHARD_ASSIGN_OR_RETURN(auto pool, KvPagePool::create(n_layer, kv_dim, 16, 1024));
//   PSHARD_ASSIGN_OR_RETURN(int32_t page, pool->take());
//   KvView layer3 = pool->layer(3).with_pages(table.data(), n_positions);
//   pool->give_back(page);
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/ops.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace pshard {

class KvPagePool {
public:
  static Result<std::unique_ptr<KvPagePool>> create(int64_t n_layer, int64_t kv_dim,
                                                    int64_t page_tokens, int64_t n_pages,
                                                    TensorType k_type = TensorType::kF32,
                                                    TensorType v_type = TensorType::kF32);

  int64_t page_tokens() const { return page_tokens_; }
  int64_t total_pages() const { return n_pages_; }
  int64_t free_pages() const { return static_cast<int64_t>(free_.size()); }
  size_t bytes() const { return k_.size() + v_.size(); }

  // A free page, or kOutOfMemory when none is left.
  Result<int32_t> take();
  void give_back(int32_t page);

  // Layer `il`'s pool as a paged KvView without a page table (add one with with_pages).
  KvView layer(int64_t il);

private:
  KvPagePool() = default;
  int64_t n_layer_ = 0, kv_dim_ = 0, page_tokens_ = 0, n_pages_ = 0;
  TensorType k_type_ = TensorType::kF32, v_type_ = TensorType::kF32;
  std::vector<uint8_t> k_, v_; // [layer][page][row][row bytes]
  std::vector<int32_t> free_;  // a stack, lowest page on top
};

} // namespace pshard
