#include "runtime/model/deepstack.h"

#include <algorithm>

namespace pshard {

std::vector<DeepstackRow> deepstack_rows(const DeepstackTable& table, std::span<const int32_t> ids,
                                         int64_t n_embd, int64_t model_layers) {
  std::vector<DeepstackRow> out;
  const int64_t layers = std::min(table.layers, model_layers);
  if (!table.data || layers <= 0)
    return out;
  for (size_t t = 0; t < ids.size(); ++t)
    out.push_back(
        {static_cast<int64_t>(t), table.data + ids[t] * n_embd, table.layer_stride, layers});
  return out;
}

bool ends_layer(std::span<const SubLayer> subs, size_t i) {
  return subs[i].layer >= 0 && (i + 1 == subs.size() || subs[i + 1].layer != subs[i].layer);
}

void add_deepstack_rows(std::span<const DeepstackRow> rows, int64_t layer, float* hidden,
                        int64_t n_embd) {
  for (const DeepstackRow& r : rows) {
    if (layer >= r.layers)
      continue;
    const float* v = r.values + layer * r.layer_stride;
    float* h = hidden + r.row * n_embd;
    for (int64_t i = 0; i < n_embd; ++i)
      h[i] += v[i];
  }
}

int64_t deepstack_layers(std::span<const DeepstackRow> rows) {
  int64_t n = 0;
  for (const DeepstackRow& r : rows)
    n = std::max(n, r.layers);
  return n;
}

} // namespace pshard
