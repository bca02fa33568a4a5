// The KV cache of one sequence on the host: for each layer, K and V rows of kv_dim values
// per position, of the cache's element types (kv_types.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/ops.h"

#include <cstdint>
#include <memory>

namespace pshard {

class KvCache {
public:
  static Result<KvCache> create(int64_t n_layer, int64_t n_ctx, int64_t kv_dim,
                                TensorType k_type = TensorType::kF32,
                                TensorType v_type = TensorType::kF32);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  TensorType k_type() const { return k_type_; }
  TensorType v_type() const { return v_type_; }
  size_t bytes() const { return static_cast<size_t>(n_layer_ * n_ctx_) * (k_row_ + v_row_); }
  // Bytes of one layer's K (or V) rows for positions [0, n).
  size_t k_bytes(int64_t n) const { return static_cast<size_t>(n) * k_row_; }
  size_t v_bytes(int64_t n) const { return static_cast<size_t>(n) * v_row_; }

  // One layer's K and V rows (for Ops).
  KvView layer(int64_t il);

private:
  int64_t n_layer_ = 0, n_ctx_ = 0, kv_dim_ = 0;
  TensorType k_type_ = TensorType::kF32, v_type_ = TensorType::kF32;
  size_t k_row_ = 0, v_row_ = 0;
  std::unique_ptr<uint8_t[]> k_, v_;
};

} // namespace pshard
