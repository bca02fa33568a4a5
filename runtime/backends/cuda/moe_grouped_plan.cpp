#include "runtime/backends/cuda/moe_grouped_plan.h"

#include <algorithm>
#include <string>

namespace pshard::cuda {
namespace {

constexpr size_t kAlignFloats = 64;

size_t aligned(size_t floats) { return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

// Floats a chunk of `tokens` tokens uses, the three arrays each aligned.
size_t chunk_floats(const MoeShape& s, int64_t tokens) {
  const size_t routes = static_cast<size_t>(tokens * s.k);
  const size_t act = aligned(routes * static_cast<size_t>(s.n_ff));
  const size_t out = aligned(routes * static_cast<size_t>(s.n_embd));
  return act * (s.fused ? 1 : 2) + out * (s.input_rows ? 2 : 1);
}

} // namespace

Result<MoeChunks> plan_moe_chunks(const MoeShape& s, size_t scratch_bytes, int64_t max_routes) {
  if (s.k <= 0 || s.n_embd <= 0 || s.n_ff <= 0)
    return invalid_argument("MoE chunking: k " + std::to_string(s.k) + ", n_embd " +
                            std::to_string(s.n_embd) + ", n_ff " + std::to_string(s.n_ff) +
                            " (each must be positive)");
  const size_t floats = scratch_bytes / sizeof(float);
  const size_t per_route = static_cast<size_t>(s.n_ff) * (s.fused ? 1 : 2) +
                           static_cast<size_t>(s.n_embd) * (s.input_rows ? 2 : 1);
  // An estimate from the unaligned size, then down until the aligned layout fits.
  int64_t tokens =
      std::min<int64_t>(static_cast<int64_t>(floats / per_route) / s.k, max_routes / s.k);
  while (tokens > 0 && chunk_floats(s, tokens) > floats)
    --tokens;
  if (tokens <= 0)
    return unsupported("CUDA moe_dispatch: one token's " + std::to_string(s.k) + " routes need " +
                       std::to_string(chunk_floats(s, 1) * sizeof(float)) +
                       " bytes of kernel scratch (n_embd " + std::to_string(s.n_embd) + ", n_ff " +
                       std::to_string(s.n_ff) + "), the workspace holds " +
                       std::to_string(scratch_bytes) + "; run this model's MoE on the CPU");
  MoeChunks c;
  c.tokens = tokens;
  const size_t routes = static_cast<size_t>(tokens * s.k);
  c.act_offset = 0;
  c.up_offset = s.fused ? 0 : aligned(routes * static_cast<size_t>(s.n_ff));
  c.out_offset = aligned(routes * static_cast<size_t>(s.n_ff)) * (s.fused ? 1 : 2);
  if (s.input_rows)
    c.in_offset = c.out_offset + aligned(routes * static_cast<size_t>(s.n_embd));
  c.floats = chunk_floats(s, tokens);
  return c;
}

void ExpertTableCache::reset() {
  table_size_ = 0;
  held_.clear();
  kept_.clear();
  next_ = 0;
}

Result<ExpertTableCache::Slot> ExpertTableCache::acquire(std::span<const uint8_t* const> table,
                                                         uint64_t capture_id) {
  if (table.size() != table_size_) { // another model's blocks: new slot sizes
    reset();
    const int64_t n = table.empty() ? 0 : capacity_ / static_cast<int64_t>(table.size());
    if (n <= 0)
      return unsupported("CUDA moe_dispatch: an expert table of " + std::to_string(table.size()) +
                         " addresses, the workspace holds " + std::to_string(capacity_));
    table_size_ = table.size();
    held_.resize(static_cast<size_t>(n));
    kept_.assign(static_cast<size_t>(n), false);
  }
  const bool capturing = capture_id != 0;
  for (size_t i = 0; i < held_.size(); ++i)
    if (std::equal(held_[i].begin(), held_[i].end(), table.begin(), table.end())) {
      kept_[i] = kept_[i] || capturing;
      return Slot{static_cast<int64_t>(i), false};
    }
  const int64_t n = slots();
  for (int64_t tried = 0; tried < n; ++tried) {
    const int64_t i = (next_ + tried) % n;
    if (kept_[static_cast<size_t>(i)])
      continue;
    held_[static_cast<size_t>(i)].assign(table.begin(), table.end());
    kept_[static_cast<size_t>(i)] = capturing;
    next_ = (i + 1) % n;
    return Slot{i, true};
  }
  return unsupported("CUDA moe_dispatch: all " + std::to_string(n) +
                     " expert-table slots of the workspace are held by a captured CUDA graph "
                     "(a plan with more streamed MoE blocks than slots); run it without graph "
                     "capture");
}

} // namespace pshard::cuda
