#include "runtime/batch/kv_page_pool.h"

#include "runtime/model/kv_cache.h" // check_state_row_types

#include <new>
#include <string>

namespace pshard {

Result<std::unique_ptr<KvPagePool>> KvPagePool::create(std::span<const int64_t> layer_pages,
                                                       int64_t kv_dim, int64_t page_tokens,
                                                       TensorType k_type, TensorType v_type,
                                                       int64_t v_dim,
                                                       std::span<const int64_t> state_rows) {
  if (v_dim == 0)
    v_dim = kv_dim;
  if (layer_pages.empty() || kv_dim <= 0 || v_dim <= 0 || page_tokens <= 0)
    return invalid_argument("KV page pool dimensions must be positive (layers: " +
                            std::to_string(layer_pages.size()) + ", tokens per page: " +
                            std::to_string(page_tokens) + ")");
  auto p = std::unique_ptr<KvPagePool>(new KvPagePool());
  p->kv_dim_ = kv_dim;
  p->v_dim_ = v_dim;
  p->page_tokens_ = page_tokens;
  p->k_type_ = k_type;
  p->v_type_ = v_type;
  if (kv_dim % tensor_type_traits(k_type).block_values != 0 ||
      v_dim % tensor_type_traits(v_type).block_values != 0)
    return invalid_argument("KV rows of " + std::to_string(kv_dim) + " values cannot be " +
                            tensor_type_name(k_type) + "/" + tensor_type_name(v_type));
  if (!state_rows.empty()) {
    if (state_rows.size() != layer_pages.size())
      return invalid_argument("KV page pool states for " + std::to_string(state_rows.size()) +
                              " layers, but the pool has " + std::to_string(layer_pages.size()));
    PSHARD_RETURN_IF_ERROR(check_state_row_types(kv_dim, k_type, v_dim, v_type));
    p->state_rows_.assign(state_rows.begin(), state_rows.end());
  }
  const size_t row_bytes = tensor_row_bytes(k_type, kv_dim) + tensor_row_bytes(v_type, v_dim);
  const int64_t most_rows = static_cast<int64_t>((size_t{1} << 40) / row_bytes);
  p->row0_.push_back(0);
  for (const int64_t pages : layer_pages) {
    if (pages <= 0 || pages > (int64_t{1} << 30))
      return invalid_argument("a layer of the KV page pool needs 1 to 2^30 pages, not " +
                              std::to_string(pages));
    if (pages * page_tokens > most_rows - p->row0_.back())
      return invalid_argument("the KV page pool's size overflows");
    p->row0_.push_back(p->row0_.back() + pages * page_tokens);
  }
  const auto rows = static_cast<size_t>(p->row0_.back());
  try {
    p->k_ = ZeroedArray<uint8_t>(rows * tensor_row_bytes(k_type, kv_dim));
    p->v_ = ZeroedArray<uint8_t>(rows * tensor_row_bytes(v_type, v_dim));
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate " + std::to_string(rows * row_bytes >> 20) +
                      " MiB of KV pages; use fewer parallel sequences (-np), a smaller context "
                      "or a smaller KV type");
  }
  return p;
}

KvView KvPagePool::layer(int64_t il) {
  const size_t layers = row0_.size() - 1;
  const auto rows = static_cast<size_t>(row0_[layers == 1 ? 0 : static_cast<size_t>(il)]);
  KvView v;
  v.k = k_.data() + rows * tensor_row_bytes(k_type_, kv_dim_);
  v.v = v_.data() + rows * tensor_row_bytes(v_type_, v_dim_);
  v.kv_dim = kv_dim_;
  v.v_dim = v_dim_;
  v.page_tokens = page_tokens_;
  v.k_type = k_type_;
  v.v_type = v_type_;
  v.state_rows = state_rows_.empty() ? 0 : state_rows_[static_cast<size_t>(il)];
  return v;
}

} // namespace pshard
