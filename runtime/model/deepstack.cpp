#include "runtime/model/deepstack.h"

namespace pshard {

std::vector<DeepstackRow> deepstack_rows(const DeepstackTable& table, std::span<const int32_t> ids,
                                         int64_t n_embd) {
  std::vector<DeepstackRow> out;
  if (!table.data || table.layers <= 0)
    return out;
  for (size_t t = 0; t < ids.size(); ++t)
    out.push_back(
        {static_cast<int64_t>(t), table.data + ids[t] * n_embd, table.layer_stride, table.layers});
  return out;
}

bool deepstack_after(std::span<const SubLayer> subs, size_t i, std::span<const DeepstackRow> rows,
                     int64_t model_layers) {
  const int64_t layer = subs[i].layer;
  const bool ends_layer = layer >= 0 && (i + 1 == subs.size() || subs[i + 1].layer != layer);
  return !rows.empty() && ends_layer && layer < model_layers;
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

} // namespace pshard
