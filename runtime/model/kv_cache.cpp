#include "runtime/model/kv_cache.h"

#include "runtime/model/decoder.h"
#include "runtime/model/kv_ring.h"
#include "runtime/model/kv_types.h"

#include <algorithm>
#include <new>
#include <string>

namespace pshard {

Result<KvCache> KvCache::create(int64_t n_layer, int64_t n_ctx, int64_t kv_dim, TensorType k_type,
                                TensorType v_type, std::span<const int64_t> rings,
                                bool one_layer_for_all, int64_t v_dim,
                                std::span<const int64_t> state_rows, int64_t state_slots) {
  if (v_dim == 0)
    v_dim = kv_dim;
  if (n_layer <= 0 || n_ctx <= 0 || kv_dim <= 0 || v_dim <= 0)
    return invalid_argument("KV cache dimensions must be positive");
  if ((!rings.empty() && static_cast<int64_t>(rings.size()) != n_layer) ||
      (!state_rows.empty() && static_cast<int64_t>(state_rows.size()) != n_layer))
    return invalid_argument("KV cache rings or states for " +
                            std::to_string(std::max(rings.size(), state_rows.size())) +
                            " layers, but the cache has " + std::to_string(n_layer));
  if (!is_kv_type(k_type) || !is_kv_type(v_type) ||
      kv_dim % tensor_type_traits(k_type).block_values != 0 ||
      v_dim % tensor_type_traits(v_type).block_values != 0)
    return invalid_argument("KV cache rows of " + std::to_string(kv_dim) + " values cannot be " +
                            tensor_type_name(k_type) + "/" + tensor_type_name(v_type));
  KvCache c;
  c.n_layer_ = n_layer;
  c.n_ctx_ = n_ctx;
  c.kv_dim_ = kv_dim;
  c.v_dim_ = v_dim;
  c.k_type_ = k_type;
  c.v_type_ = v_type;
  c.k_row_ = tensor_row_bytes(k_type, kv_dim);
  c.v_row_ = tensor_row_bytes(v_type, v_dim);
  if (state_slots < 1)
    return invalid_argument("a KV cache holds at least one sequence's states");
  c.state_slots_ = state_slots;
  c.rings_.assign(static_cast<size_t>(n_layer), 0);
  c.state_rows_.assign(static_cast<size_t>(n_layer), 0);
  for (size_t il = 0; il < state_rows.size(); ++il) {
    if (state_rows[il] < 0 || (state_rows[il] > 0 && one_layer_for_all))
      return invalid_argument("a recurrent layer's state rows must be positive, and its cache "
                              "its own");
    c.state_rows_[il] = state_rows[il];
    c.recurrent_ = c.recurrent_ || state_rows[il] > 0;
  }
  if (c.recurrent_)
    PSHARD_RETURN_IF_ERROR(check_state_row_types(kv_dim, k_type, v_dim, v_type));
  c.row0_.assign(1, 0);
  if (one_layer_for_all) { // every layer's first row 0; back(): one layer's rows
    c.row0_.assign(static_cast<size_t>(n_layer), 0);
    c.row0_.push_back(n_ctx);
  }
  for (int64_t il = 0; il < n_layer && !one_layer_for_all; ++il) {
    const int64_t ring = rings.empty() ? 0 : rings[static_cast<size_t>(il)];
    if (ring < 0)
      return invalid_argument("a KV cache ring must not be negative");
    c.rings_[static_cast<size_t>(il)] = ring > 0 && ring < n_ctx ? ring : 0;
    c.ring_max_ = std::max(c.ring_max_, c.rings_[static_cast<size_t>(il)]);
    const int64_t layer_rows = c.rows_held(il, n_ctx);
    if (c.row0_.back() > (int64_t{1} << 40) - layer_rows)
      return invalid_argument("KV cache size overflows");
    c.row0_.push_back(c.row0_.back() + layer_rows);
  }
  const auto rows = static_cast<size_t>(c.row0_.back());
  if (rows > (size_t{1} << 40) / (c.k_row_ + c.v_row_))
    return invalid_argument("KV cache size overflows");
  try {
    c.k_ = ZeroedArray<uint8_t>(rows * c.k_row_);
    c.v_ = ZeroedArray<uint8_t>(rows * c.v_row_);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate a KV cache of " + std::to_string(c.bytes() >> 20) +
                      " MiB for a context of " + std::to_string(n_ctx) +
                      " tokens; use a smaller context (-c) or a smaller KV type (-ctk/-ctv)");
  }
  return c;
}

KvView KvCache::layer(int64_t il) {
  KvView v;
  const auto row0 = static_cast<size_t>(row0_[static_cast<size_t>(il)]);
  v.k = k_.data() + row0 * k_row_;
  v.v = v_.data() + row0 * v_row_;
  v.n_ctx = n_ctx_;
  v.ring = ring(il);
  v.state_rows = state_rows(il);
  v.kv_dim = kv_dim_;
  v.v_dim = v_dim_;
  v.k_type = k_type_;
  v.v_type = v_type_;
  return v;
}

int64_t widest_attention_window(const ModelHParams& hp) {
  int64_t widest = 0;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    widest = std::max(widest, hp.attention_window(il));
  return widest;
}

Result<KvCache> model_kv_cache(const ModelHParams& hp, int64_t n_ctx, TensorType k_type,
                               TensorType v_type, int64_t ring, bool one_layer_for_all,
                               int64_t state_slots) {
  std::vector<int64_t> rings(static_cast<size_t>(std::max<int64_t>(hp.n_layer, 0)), 0);
  for (int64_t il = 0; il < hp.n_layer; ++il)
    if (hp.attention_window(il) > 0)
      rings[static_cast<size_t>(il)] = ring;
  PSHARD_ASSIGN_OR_RETURN(KvCache kv,
                          KvCache::create(hp.n_layer, n_ctx, hp.kv_dim(), k_type, v_type, rings,
                                          one_layer_for_all, hp.v_dim(),
                                          model_state_rows(hp, k_type, v_type), state_slots));
  kv.set_ring_window(widest_attention_window(hp));
  return kv;
}

Status KvCache::rewind(int64_t to, int64_t n_past) {
  PSHARD_RETURN_IF_ERROR(check_rewind(to, n_past));
  reached_ = std::max(reached_, n_past); // n_past only grew since the last rewind
  const int64_t floor = kv_ring_rewind_floor(ring_max_, ring_window_, reached_);
  if (to > 0 && to < floor)
    return out_of_range("cannot rewind to position " + std::to_string(to) +
                        ": the sliding-window layers keep their last " + std::to_string(ring_max_) +
                        " positions as a ring, which holds later "
                        "ones now; rewind to 0 and decode again, or to at least " +
                        std::to_string(floor));
  if (recurrent_)
    PSHARD_RETURN_IF_ERROR(check_state_rewind(to, n_past));
  if (to == 0)
    reached_ = 0;
  return Status::ok_status();
}

int64_t KvCache::rows_held(int64_t il, int64_t positions) const {
  return state_rows(il) > 0 ? state_rows(il) * state_slots_ : kv_rows_held(ring(il), positions);
}

Status check_state_rewind(int64_t to, int64_t n_past) {
  if (to == 0 || to == n_past)
    return Status::ok_status();
  return out_of_range("cannot rewind to position " + std::to_string(to) + " of " +
                      std::to_string(n_past) +
                      ": this model's recurrent layers keep a state, not the positions "
                      "before it; rewind to 0 and decode again");
}

Status check_state_row_types(int64_t kv_dim, TensorType k_type, int64_t v_dim,
                             TensorType v_type) {
  if (tensor_row_bytes(k_type, kv_dim) % sizeof(float) == 0 &&
      tensor_row_bytes(v_type, v_dim) % sizeof(float) == 0)
    return Status::ok_status();
  return invalid_argument(std::string("a recurrent layer keeps its state as floats in its cache "
                                      "rows, and rows of ") +
                          std::to_string(kv_dim) + " " + tensor_type_name(k_type) + "/" +
                          tensor_type_name(v_type) +
                          " values are not whole floats; use -ctk f16 -ctv f16 (or f32)");
}

std::vector<int64_t> model_state_rows(const ModelHParams& hp, TensorType k_type,
                                      TensorType v_type) {
  std::vector<int64_t> rows;
  if (!hp.has_recurrent_layers())
    return rows;
  const int64_t r = delta_net_state_rows(hp.delta_net, tensor_row_bytes(k_type, hp.kv_dim()),
                                         tensor_row_bytes(v_type, hp.v_dim()));
  for (int64_t il = 0; il < hp.n_layer; ++il)
    rows.push_back(hp.is_recurrent_layer(il) ? r : 0);
  return rows;
}

} // namespace pshard
