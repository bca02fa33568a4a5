// The MoE block on the CUDA backend, as few launches as the block has matrices: routing on
// the device (softmax or sigmoid, top-k, renormalise, scale) — or the host's routes when the
// executor routed the pass and copied only those experts (MoeDispatch::routes) — then, for all k
// routes of every token of a chunk at once, gate and up fused with SiLU·mul (one
// launch), down (one launch) and the weighted combine in slot order, which is expert-
// index order, as the CPU sums (one launch). Llama 4's experts take weighted input rows
// instead (one launch more) and are summed unweighted. 1 + 3 launches per chunk whatever k is,
// where one launch per route and matrix made it 1 + 5k (41 at top-8).
//
// Each route's activations and expert output live in the kernel workspace's prefill
// scratch (act + weight, which no MoE launch uses otherwise), so a chunk is as many
// tokens as fit it (moe_grouped_plan.h); decode is always one chunk.
#include "runtime/backends/cuda/cuda_ops.h"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <algorithm>
#include <vector>

namespace pshard::cuda {
namespace {

// The workspace's act and weight regions, one scratch (cuda_workspace.h).
constexpr size_t kMoeScratchBytes = CudaWorkspace::kScratchBytes;
constexpr int64_t kMoeMaxRoutes =
    std::min<int64_t>(CudaWorkspace::kRoutes, kernels::kMaxGroupedRoutes);

kernels::RouteGating route_gating(const MoeGating& g) {
  return {g.func == ExpertGating::kSigmoid,
          g.normalize,
          g.scale,
          g.selection_bias,
          g.n_groups,
          g.n_groups_used};
}

bool fused_gate_up(const MoeDispatch& moe) {
  return moe.gate.first.type == moe.up.first.type &&
         moe.gate.first.row_bytes == moe.up.first.row_bytes;
}

kernels::ExpertAddress strided(const ExpertMatrices& m) {
  return {nullptr, m.first.data, m.stride()};
}

// The capture sequence `stream` is in, or 0 when it is not capturing.
Result<uint64_t> capture_id(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  PSHARD_CUDA_RETURN_IF_ERROR(cudaStreamGetCaptureInfo(stream, &status, &id));
  return status == cudaStreamCaptureStatusActive ? static_cast<uint64_t>(id) : 0;
}

} // namespace

// Placed experts (a streaming slot, scattered addresses) need their addresses on the
// device: the table takes a slot of the workspace's expert_ptrs, uploaded only when no
// slot holds it already. A block stored as one tensor needs none (base + e * stride).
Status CudaOps::expert_addresses(const MoeDispatch& moe, uint64_t capture,
                                 kernels::ExpertAddress (&a)[3]) {
  const ExpertMatrices* m[3] = {&moe.gate, &moe.up, &moe.down};
  if (moe.gate.placed.empty() && moe.up.placed.empty() && moe.down.placed.empty()) {
    for (int i = 0; i < 3; ++i)
      a[i] = strided(*m[i]);
    return Status::ok_status();
  }
  const int64_t n_expert = moe.gate.n_expert;
  table_.resize(static_cast<size_t>(3 * n_expert));
  for (int i = 0; i < 3; ++i)
    for (int64_t e = 0; e < n_expert; ++e)
      table_[static_cast<size_t>(i * n_expert + e)] = m[i]->expert(e).data;
  PSHARD_ASSIGN_OR_RETURN(ExpertTableCache::Slot slot, tables_.acquire(table_, capture));
  const uint8_t** dev = ws_.expert_ptrs + slot.index * 3 * n_expert;
  if (slot.upload)
    PSHARD_RETURN_IF_ERROR(staging_->upload_table(slot.index, table_, dev, stream_, capture != 0));
  for (int i = 0; i < 3; ++i)
    a[i] = {dev + i * n_expert, nullptr, 0};
  return Status::ok_status();
}

// Route r (expert ws_.route_experts[r], input row x[r / k]) through its expert: gate and
// up fused with their biases and activation (one launch; two and the activation when
// their types differ), then down and its bias (one launch) into out.eo.
Status CudaOps::expert_products(const MoeDispatch& moe, const kernels::ExpertAddress (&addr)[3],
                                int64_t k, const float* x, int64_t n_routes,
                                const ExpertScratch& out) {
  const int64_t d = moe.n_embd, ff = moe.n_ff;
  const MatrixView& g = moe.gate.first;
  const MatrixView& u = moe.up.first;
  const MatrixView& dn = moe.down.first;
  const int32_t* experts = ws_.route_experts;
  if (moe.activation == FfnActivation::kGeluTanh)
    return unsupported("CUDA MoE: GELU-gated experts are not implemented (no family has them)");
  const kernels::ExpertGlu glu{moe.gate_bias, moe.up_bias,
                               moe.activation == FfnActivation::kSwigluOai};
  if (fused_gate_up(moe)) {
    PSHARD_CUDA_RETURN_IF_ERROR(kernels::moe_gate_up(g.type, addr[0], addr[1], experts, k,
                                                     g.row_bytes, ff, d, x, n_routes, glu, out.act,
                                                     stream_));
  } else { // gate and up of different types: each alone, then the activation
    PSHARD_CUDA_RETURN_IF_ERROR(kernels::moe_grouped_matvec(g.type, addr[0], experts, k,
                                                            g.row_bytes, ff, d, x, n_routes,
                                                            glu.gate_bias, out.act, stream_));
    PSHARD_CUDA_RETURN_IF_ERROR(kernels::moe_grouped_matvec(u.type, addr[1], experts, k,
                                                            u.row_bytes, ff, d, x, n_routes,
                                                            glu.up_bias, out.up, stream_));
    PSHARD_CUDA_RETURN_IF_ERROR(
        glu.swiglu_oai ? kernels::swiglu_oai(out.act, out.up, out.act, n_routes * ff, stream_)
                       : kernels::silu_mul(out.act, out.up, out.act, n_routes * ff, stream_));
  }
  PSHARD_CUDA_RETURN_IF_ERROR(kernels::moe_grouped_matvec(dn.type, addr[2], experts, 1,
                                                          dn.row_bytes, d, ff, out.act, n_routes,
                                                          moe.down_bias, out.eo, stream_));
  return Status::ok_status();
}

Result<MoeChunks> CudaOps::expert_row_chunks(const MoeDispatch& moe) const {
  return plan_moe_chunks({1, moe.n_embd, moe.n_ff, fused_gate_up(moe), /*input_rows=*/true},
                         kMoeScratchBytes, kMoeMaxRoutes);
}

Status CudaOps::moe_rows(const MoeDispatch& moe, std::span<const int32_t> experts,
                         const MoeChunks& c) {
  if (!need_workspace("a split MoE pass"))
    return Status::ok_status(); // need_workspace kept the error
  const auto n = static_cast<int64_t>(experts.size());
  if (3 * moe.gate.n_expert > CudaWorkspace::kExpertPtrs || n > c.tokens)
    return internal_error("CUDA split MoE pass: " + std::to_string(n) + " rows of " +
                          std::to_string(moe.gate.n_expert) + " experts, a chunk holds " +
                          std::to_string(c.tokens));
  if (!staging_)
    return staging_status_;
  kernels::ExpertAddress addr[3];
  PSHARD_RETURN_IF_ERROR(expert_addresses(moe, /*capture=*/0, addr));
  unit_weights_.assign(experts.size(), 1.0f); // the upload carries weights; the host sums
  PSHARD_RETURN_IF_ERROR(staging_->upload_routes(experts.data(), unit_weights_.data(), n,
                                                 ws_.route_experts, ws_.route_weights, stream_));
  float* scratch = reinterpret_cast<float*>(ws_.act);
  return expert_products(moe, addr, /*k=*/1, scratch + c.in_offset, n,
                         {scratch + c.act_offset, scratch + c.up_offset, scratch + c.out_offset});
}

void CudaOps::moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe,
                           int64_t n_tokens, float* out) {
  if (n_tokens <= 0 || !need_workspace("moe_dispatch"))
    return;
  sticky_.note(moe_grouped(x, router_logits, moe, n_tokens, out));
}

Status CudaOps::moe_grouped(const float* x, float* router_logits, const MoeDispatch& moe,
                            int64_t n_tokens, float* out) {
  const int64_t n_expert = moe.gate.n_expert, k = moe.n_expert_used;
  const int64_t d = moe.n_embd, ff = moe.n_ff;
  if (3 * n_expert > CudaWorkspace::kExpertPtrs || k <= 0)
    return unsupported("CUDA moe_dispatch: " + std::to_string(n_expert) + " experts, " +
                       std::to_string(k) + " used (at most " +
                       std::to_string(CudaWorkspace::kExpertPtrs / 3) + " experts)");
  if (!staging_)
    return staging_status_;
  const MoeRoutes* host = moe.routes.get();
  if (host && (host->n_tokens != n_tokens || host->k != k ||
               host->experts.size() != static_cast<size_t>(n_tokens * k) ||
               host->weights.size() != host->experts.size()))
    return internal_error("CUDA moe_dispatch: the host's routes cover " +
                          std::to_string(host->n_tokens) + " tokens x " + std::to_string(host->k) +
                          ", the pass " + std::to_string(n_tokens) + " x " + std::to_string(k));
  PSHARD_ASSIGN_OR_RETURN(uint64_t capture, capture_id(stream_));
  if (capture != 0 && host)
    return unsupported("CUDA moe_dispatch: a pass routed on the host cannot be captured into "
                       "a CUDA graph (its routes change every pass); run it uncaptured");
  kernels::ExpertAddress addr[3];
  PSHARD_RETURN_IF_ERROR(expert_addresses(moe, capture, addr));
  // Llama 4's experts take their inputs weighted: each route's row, scaled, in the chunk's
  // input rows, one route per row; their outputs are summed unweighted.
  const bool weighted = moe.gating.weight_inputs;
  PSHARD_ASSIGN_OR_RETURN(MoeChunks c, plan_moe_chunks({k, d, ff, fused_gate_up(moe), weighted},
                                                       kMoeScratchBytes, kMoeMaxRoutes));
  auto* scratch = reinterpret_cast<float*>(ws_.act);
  float* act = scratch + c.act_offset;
  float* up = scratch + c.up_offset;
  float* eo = scratch + c.out_offset;
  for (int64_t t0 = 0; t0 < n_tokens; t0 += c.tokens) {
    const int64_t nc = std::min(c.tokens, n_tokens - t0), nr = nc * k;
    const float* xc = x + t0 * d;
    if (host)
      PSHARD_RETURN_IF_ERROR(
          staging_->upload_routes(host->experts.data() + t0 * k, host->weights.data() + t0 * k, nr,
                                  ws_.route_experts, ws_.route_weights, stream_));
    else
      PSHARD_CUDA_RETURN_IF_ERROR(kernels::moe_route(router_logits + t0 * n_expert, nc, n_expert, k,
                                                     route_gating(moe.gating), ws_.route_experts,
                                                     ws_.route_weights, stream_));
    if (weighted) {
      float* rows = scratch + c.in_offset;
      PSHARD_CUDA_RETURN_IF_ERROR(
          kernels::moe_weighted_rows(xc, ws_.route_weights, k, nr, d, rows, stream_));
      PSHARD_RETURN_IF_ERROR(expert_products(moe, addr, /*k=*/1, rows, nr, {act, up, eo}));
    } else {
      PSHARD_RETURN_IF_ERROR(expert_products(moe, addr, k, xc, nr, {act, up, eo}));
    }
    PSHARD_CUDA_RETURN_IF_ERROR(kernels::moe_combine(eo, weighted ? nullptr : ws_.route_weights, k,
                                                     nc, d, out + t0 * d, stream_));
  }
  return Status::ok_status();
}

} // namespace pshard::cuda
