#include "runtime/batch/kv_page_pool.h"

#include <new>
#include <string>

namespace pshard {

Result<std::unique_ptr<KvPagePool>> KvPagePool::create(int64_t n_layer, int64_t kv_dim,
                                                       int64_t page_tokens, int64_t n_pages) {
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
  size_t floats;
  if (__builtin_mul_overflow(static_cast<size_t>(n_layer * kv_dim),
                             static_cast<size_t>(n_pages * page_tokens), &floats))
    return invalid_argument("the KV page pool's size overflows");
  try {
    p->k_.assign(floats, 0.0f);
    p->v_.assign(floats, 0.0f);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate " + std::to_string(2 * floats * sizeof(float) >> 20) +
                      " MiB of KV pages; use fewer parallel sequences (-np) or a smaller context");
  }
  for (int64_t page = n_pages - 1; page >= 0; --page)
    p->free_.push_back(static_cast<int32_t>(page));
  return p;
}

Result<int32_t> KvPagePool::take() {
  if (free_.empty())
    return Status(StatusCode::kOutOfMemory,
                  "all " + std::to_string(n_pages_) + " KV pages of " +
                      std::to_string(page_tokens_) + " tokens are in use");
  const int32_t page = free_.back();
  free_.pop_back();
  return page;
}

void KvPagePool::give_back(int32_t page) {
  if (page >= 0 && page < n_pages_)
    free_.push_back(page);
}

KvView KvPagePool::layer(int64_t il) {
  const size_t at = static_cast<size_t>(il * n_pages_ * page_tokens_ * kv_dim_);
  KvView v{k_.data() + at, v_.data() + at, 0, kv_dim_};
  v.page_tokens = page_tokens_;
  return v;
}

} // namespace pshard
