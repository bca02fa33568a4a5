#include "runtime/model/kv_cache.h"

#include "runtime/model/kv_types.h"

#include <new>
#include <string>

namespace pshard {

Result<KvCache> KvCache::create(int64_t n_layer, int64_t n_ctx, int64_t kv_dim,
                                TensorType k_type, TensorType v_type) {
  if (n_layer <= 0 || n_ctx <= 0 || kv_dim <= 0)
    return invalid_argument("KV cache dimensions must be positive");
  if (!is_kv_type(k_type) || !is_kv_type(v_type) ||
      kv_dim % tensor_type_traits(k_type).block_values != 0 ||
      kv_dim % tensor_type_traits(v_type).block_values != 0)
    return invalid_argument("KV cache rows of " + std::to_string(kv_dim) + " values cannot be " +
                            tensor_type_name(k_type) + "/" + tensor_type_name(v_type));
  KvCache c;
  c.n_layer_ = n_layer;
  c.n_ctx_ = n_ctx;
  c.kv_dim_ = kv_dim;
  c.k_type_ = k_type;
  c.v_type_ = v_type;
  c.k_row_ = tensor_row_bytes(k_type, kv_dim);
  c.v_row_ = tensor_row_bytes(v_type, kv_dim);
  size_t rows;
  if (__builtin_mul_overflow(static_cast<size_t>(n_layer), static_cast<size_t>(n_ctx), &rows) ||
      rows > (size_t{1} << 40) / (c.k_row_ + c.v_row_))
    return invalid_argument("KV cache size overflows");
  c.k_.reset(new (std::nothrow) uint8_t[rows * c.k_row_]());
  c.v_.reset(new (std::nothrow) uint8_t[rows * c.v_row_]());
  if (!c.k_ || !c.v_)
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate a KV cache of " + std::to_string(c.bytes() >> 20) +
                      " MiB for a context of " + std::to_string(n_ctx) +
                      " tokens; use a smaller context (-c) or a smaller KV type (-ctk/-ctv)");
  return c;
}

KvView KvCache::layer(int64_t il) {
  KvView v;
  v.k = k_.get() + static_cast<size_t>(il * n_ctx_) * k_row_;
  v.v = v_.get() + static_cast<size_t>(il * n_ctx_) * v_row_;
  v.n_ctx = n_ctx_;
  v.kv_dim = kv_dim_;
  v.k_type = k_type_;
  v.v_type = v_type_;
  return v;
}

} // namespace pshard
