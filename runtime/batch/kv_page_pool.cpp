#include "runtime/batch/kv_page_pool.h"

#include <new>
#include <string>

namespace pshard {

Result<std::unique_ptr<KvPagePool>> KvPagePool::create(int64_t n_layer, int64_t kv_dim,
                                                       int64_t page_tokens, int64_t n_pages,
                                                       TensorType k_type, TensorType v_type) {
  if (n_layer <= 0 || kv_dim <= 0 || page_tokens <= 0 || n_pages <= 0 ||
      n_pages > (int64_t{1} << 30))
    return invalid_argument("KV page pool dimensions must be positive (pages: " +
                            std::to_string(n_pages) + ", tokens per page: " +
                            std::to_string(page_tokens) + ")");
  auto p = std::unique_ptr<KvPagePool>(new KvPagePool());
  p->n_layer_ = n_layer;
  p->kv_dim_ = kv_dim;
  p->page_tokens_ = page_tokens;
  p->n_pages_ = n_pages;
  p->k_type_ = k_type;
  p->v_type_ = v_type;
  if (kv_dim % tensor_type_traits(k_type).block_values != 0 ||
      kv_dim % tensor_type_traits(v_type).block_values != 0)
    return invalid_argument("KV rows of " + std::to_string(kv_dim) + " values cannot be " +
                            tensor_type_name(k_type) + "/" + tensor_type_name(v_type));
  size_t rows;
  if (__builtin_mul_overflow(static_cast<size_t>(n_layer), static_cast<size_t>(n_pages * page_tokens),
                             &rows) ||
      rows > (size_t{1} << 40) / (tensor_row_bytes(k_type, kv_dim) + 1))
    return invalid_argument("the KV page pool's size overflows");
  try {
    p->k_.assign(rows * tensor_row_bytes(k_type, kv_dim), 0);
    p->v_.assign(rows * tensor_row_bytes(v_type, kv_dim), 0);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate " +
                      std::to_string(rows * (tensor_row_bytes(k_type, kv_dim) +
                                             tensor_row_bytes(v_type, kv_dim)) >> 20) +
                      " MiB of KV pages; use fewer parallel sequences (-np), a smaller context "
                      "or a smaller KV type");
  }
  return p;
}

KvView KvPagePool::layer(int64_t il) {
  const size_t rows = static_cast<size_t>(il * n_pages_ * page_tokens_);
  KvView v;
  v.k = k_.data() + rows * tensor_row_bytes(k_type_, kv_dim_);
  v.v = v_.data() + rows * tensor_row_bytes(v_type_, kv_dim_);
  v.kv_dim = kv_dim_;
  v.page_tokens = page_tokens_;
  v.k_type = k_type_;
  v.v_type = v_type_;
  return v;
}

} // namespace pshard
