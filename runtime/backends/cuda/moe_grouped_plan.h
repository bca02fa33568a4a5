// Host-side arithmetic of the CUDA backend's grouped MoE dispatch (cuda_moe.cpp), kept
// free of the CUDA runtime so it is tested on machines without a GPU:
//
//   - plan_moe_chunks: how many tokens one round of the three grouped launches covers.
//     Every route (token x slot) needs its SiLU-gated activations (n_ff floats; twice
//     that when gate and up differ in type and run unfused) and its expert's output
//     (n_embd floats) in the kernel workspace's scratch — and, for a split pass's rows
//     uploaded from the host, its input row too — and the kernels take at most
//     kernels::kMaxGroupedRoutes routes per launch.
//   - ExpertTableCache: which slot of the workspace's expert pointer region holds a
//     block's table of expert addresses, so an unchanged table is not uploaded again.
//
//   MoeChunks c = *plan_moe_chunks({k, n_embd, n_ff, fused}, scratch_bytes, max_routes);
//   for (t0 = 0; t0 < n; t0 += c.tokens) { act = scratch + c.act_offset; ... }
#pragma once

#include "runtime/core/status.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pshard::cuda {

struct MoeShape {
  int64_t k = 0;      // experts used per token
  int64_t n_embd = 0; // d: the block's input and output width
  int64_t n_ff = 0;   // each expert's hidden width
  bool fused = true;  // gate and up in one kernel (same weight type)
  // The chunk also holds its routes' input rows (n_embd floats each): a split pass's
  // rows, uploaded from the host, one route per row (k = 1), or Llama 4's routes' rows,
  // each its token's times the route's weight.
  bool input_rows = false;
};

// Offsets are in floats from the scratch's start, each 64-float (256-byte) aligned.
struct MoeChunks {
  int64_t tokens = 0;    // tokens per chunk
  size_t act_offset = 0; // tokens * k * n_ff: SiLU(gate) * up (gate alone when unfused)
  size_t up_offset = 0;  // unfused only: up, tokens * k * n_ff
  size_t out_offset = 0; // tokens * k * n_embd: each route's expert output
  size_t in_offset = 0;  // input_rows only: tokens * k * n_embd, each route's input row
  size_t floats = 0;     // the scratch the chunk uses
};

// The largest chunk whose routes fit `scratch_bytes` and `max_routes`; an error naming
// the shape when not even one token's k routes fit.
Result<MoeChunks> plan_moe_chunks(const MoeShape& shape, size_t scratch_bytes, int64_t max_routes);

// Slots of `capacity` pointers' room, each holding one table (3 x n_expert addresses:
// gate, up, down). A table found in a slot needs no upload; a new one takes the next
// slot in turn. During a CUDA graph capture (capture_id != 0) the graph replays the
// kernels with the slot's device address, so every slot a capture uses is kept as it is
// for the rest of the plan (until reset(): a new workspace, a new plan); when every
// slot is kept, acquire fails rather than overwrite a table a graph still reads.
class ExpertTableCache {
public:
  explicit ExpertTableCache(int64_t capacity) : capacity_(capacity) {}

  struct Slot {
    int64_t index = 0;   // the table lives at region + index * table size
    bool upload = false; // the slot's device copy must be written (a new table)
  };
  Result<Slot> acquire(std::span<const uint8_t* const> table, uint64_t capture_id);
  void reset();
  int64_t slots() const { return static_cast<int64_t>(held_.size()); }

private:
  int64_t capacity_;
  size_t table_size_ = 0;
  std::vector<std::vector<const uint8_t*>> held_; // host copies of the slots' tables
  std::vector<bool> kept_;                        // used by a graph capture
  int64_t next_ = 0;                              // the next slot to overwrite
};

} // namespace pshard::cuda
