#include "runtime/model/kv_cache.h"

#include <new>
#include <string>

namespace pshard {

Result<KvCache> KvCache::create(int64_t n_layer, int64_t n_ctx, int64_t kv_dim) {
  if (n_layer <= 0 || n_ctx <= 0 || kv_dim <= 0)
    return invalid_argument("KV cache dimensions must be positive");
  KvCache c;
  c.n_layer_ = n_layer;
  c.n_ctx_ = n_ctx;
  c.kv_dim_ = kv_dim;
  size_t elements;
  if (__builtin_mul_overflow(static_cast<size_t>(n_layer), static_cast<size_t>(n_ctx), &elements) ||
      __builtin_mul_overflow(elements, static_cast<size_t>(kv_dim), &elements))
    return invalid_argument("KV cache size overflows");
  c.elements_ = elements;
  c.k_.reset(new (std::nothrow) float[elements]());
  c.v_.reset(new (std::nothrow) float[elements]());
  if (!c.k_ || !c.v_)
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate a KV cache of " + std::to_string(c.bytes() >> 20) +
                      " MiB for a context of " + std::to_string(n_ctx) +
                      " tokens; use a smaller context (-c)");
  return c;
}

} // namespace pshard
