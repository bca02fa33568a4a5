// The KV cache of one sequence on the host: for each layer, K and V rows of kv_dim (V: v_dim) values
// per position, of the cache's element types (kv_types.h); a sliding-window layer's
// rows may be a ring of fewer (kv_ring.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/zeroed_array.h"
#include "runtime/device/ops.h"
#include "runtime/model/hparams.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace pshard {

class KvCache {
public:
  // rings: per layer, its ring's rows (0: all n_ctx positions); empty: no rings.
  // one_layer_for_all: every layer reads and writes the same rows (no rings) — a model that
  // attends both ways keeps nothing past a pass (a text is one pass), and its layers run
  // one after another, so one layer's rows serve them all: 1/n_layer of the memory.
  // V rows hold v_dim values (0: kv_dim, as K rows; DeepSeek's latent is narrower).
  // state_rows: per layer, the rows of a recurrent layer's state (runtime/kernels/
  // delta_net.h), held whatever the context (0: an attention layer); empty: none.
  // state_slots: the states such a layer holds, one per sequence slot of a batch, one after
  // another (a batch's rows serve several sequences; a state does not).
  static Result<KvCache> create(int64_t n_layer, int64_t n_ctx, int64_t kv_dim,
                                TensorType k_type = TensorType::kF32,
                                TensorType v_type = TensorType::kF32,
                                std::span<const int64_t> rings = {}, bool one_layer_for_all = false,
                                int64_t v_dim = 0, std::span<const int64_t> state_rows = {},
                                int64_t state_slots = 1);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t kv_dim() const { return kv_dim_; }
  TensorType k_type() const { return k_type_; }
  TensorType v_type() const { return v_type_; }
  size_t bytes() const { return static_cast<size_t>(row0_.back()) * (k_row_ + v_row_); }
  // Bytes of n K (or V) rows.
  size_t k_bytes(int64_t n) const { return static_cast<size_t>(n) * k_row_; }
  size_t v_bytes(int64_t n) const { return static_cast<size_t>(n) * v_row_; }
  // A layer's ring (0: none), and the rows it keeps for `positions` cached positions:
  // rows [0, that) hold them, whatever the layer's storage.
  int64_t ring(int64_t il) const { return rings_[static_cast<size_t>(il)]; }
  // A recurrent layer's state rows (0: an attention layer), of one sequence slot's state.
  int64_t state_rows(int64_t il) const { return state_rows_[static_cast<size_t>(il)]; }
  int64_t state_slots() const { return state_slots_; }
  int64_t rows_held(int64_t il, int64_t positions) const;
  int64_t widest_ring() const { return ring_max_; }
  // The widest window the rings serve (model_kv_cache sets it).
  void set_ring_window(int64_t window) { ring_window_ = window; }

  // A sequence at n_past going back to `to`: fine for 0 ≤ to ≤ n_past, but with rings only
  // for 0 (starting afresh) or a position whose window they still hold (kv_ring.h), and
  // with recurrent layers only for 0 or n_past (a state keeps no earlier positions).
  Status rewind(int64_t to, int64_t n_past);
  // The sequence starts afresh (the session's reset).
  void restart() { reached_ = 0; }
  // The rows of a sequence's first n_past positions were written from a saved state
  // (runtime/executor/session_state.h): the cache holds those positions, as after
  // decoding them from a fresh start.
  void restore(int64_t n_past) { reached_ = n_past; }

  // One layer's K and V rows (for Ops).
  KvView layer(int64_t il);

private:
  int64_t n_layer_ = 0, n_ctx_ = 0, kv_dim_ = 0, v_dim_ = 0;
  TensorType k_type_ = TensorType::kF32, v_type_ = TensorType::kF32;
  size_t k_row_ = 0, v_row_ = 0;
  std::vector<int64_t> rings_;
  std::vector<int64_t> state_rows_;
  int64_t state_slots_ = 1;
  bool recurrent_ = false;
  std::vector<int64_t> row0_{0}; // layer il's first row; back(): all rows
  int64_t ring_max_ = 0, ring_window_ = 0;
  int64_t reached_ = 0; // the most positions held since the sequence last started afresh
  ZeroedArray<uint8_t> k_, v_; // resident where written (a short text: its rows only)
};

// The widest sliding window of the model's layers (0: none).
int64_t widest_attention_window(const ModelHParams& hp);

// Per layer, the rows of its recurrent state in a cache of these types (0: an attention
// layer); empty for a model without recurrent layers. The planner sizes caches by it too.
std::vector<int64_t> model_state_rows(const ModelHParams& hp, TensorType k_type, TensorType v_type);
// kOutOfRange for a sequence at n_past going back to other than 0 or n_past: a recurrent
// layer's state keeps none of the positions before it.
Status check_state_rewind(int64_t to, int64_t n_past);

// kInvalidArgument unless K rows of kv_dim k_type values and V rows of v_dim v_type values
// are whole floats, which a recurrent layer's state in them needs.
Status check_state_row_types(int64_t kv_dim, TensorType k_type, int64_t v_dim, TensorType v_type);

// One sequence's cache for the model, its sliding-window layers rings of `ring` rows
// (0: whole caches; kv_ring.h); one_layer_for_all as KvCache::create's (a model that attends
// both ways, where every layer's attention runs on the host).
Result<KvCache> model_kv_cache(const ModelHParams& hp, int64_t n_ctx, TensorType k_type,
                               TensorType v_type, int64_t ring, bool one_layer_for_all = false,
                               int64_t state_slots = 1);

} // namespace pshard
