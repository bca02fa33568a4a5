// The KV cache of one sequence on the host: for each layer, K and V rows of
// kv_dim floats per position. F32 so results do not depend on where attention runs.
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/ops.h"

#include <cstdint>
#include <memory>

namespace pshard {

class KvCache {
public:
  static Result<KvCache> create(int64_t n_layer, int64_t n_ctx, int64_t kv_dim);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  size_t bytes() const { return 2 * elements_ * sizeof(float); }

  float* k(int64_t layer, int64_t pos) { return k_.get() + offset(layer, pos); }
  float* v(int64_t layer, int64_t pos) { return v_.get() + offset(layer, pos); }
  const float* k(int64_t layer, int64_t pos) const { return k_.get() + offset(layer, pos); }
  const float* v(int64_t layer, int64_t pos) const { return v_.get() + offset(layer, pos); }
  // One layer's K and V rows (for Ops).
  KvView layer(int64_t il) { return {k(il, 0), v(il, 0), n_ctx_, kv_dim_}; }

private:
  size_t offset(int64_t layer, int64_t pos) const {
    return (static_cast<size_t>(layer) * n_ctx_ + pos) * kv_dim_;
  }
  int64_t n_layer_ = 0, n_ctx_ = 0, kv_dim_ = 0;
  size_t elements_ = 0;
  std::unique_ptr<float[]> k_, v_;
};

} // namespace pshard
