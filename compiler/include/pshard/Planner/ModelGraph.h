// The model as the planner sees it: the table of sub-layers (embed, attn[i], ffn[i] or
// moe[i], head — the same names and order as runtime/model/sublayer.h), each with its
// GGUF tensors, weight bytes and per-token costs. Built from GGUF metadata only: the
// tensor data of a 100 GB model is never touched.
//
//   PSHARD_ASSIGN_OR_RETURN(auto file,
//       gguf::GgufFile::open("model.gguf", gguf::OpenMode::kMetadataOnly));
//   PSHARD_ASSIGN_OR_RETURN(planner::ModelGraph graph, planner::build_model_graph(*file));
//   for (const planner::SubLayerInfo& s : graph.sublayers)
//     std::cout << s.name << " " << s.weight_bytes << " B, "
//               << s.flops(/*n_tokens=*/1, /*ctx=*/4096) << " FLOP\n";
//
// Cost model conventions (all per forward pass of n new tokens, context ctx):
//  - matmul FLOPs are 2·rows·cols per token and matrix; attention adds
//    4·n_head·head_dim·ctx per token (QK^T and PV);
//  - weight bytes read: the whole sub-layer for dense blocks; for MoE the router and
//    norms plus the expected number of DISTINCT experts touched by n tokens each picking
//    k of E: E·(1 − (1 − k/E)^n) (one token reads k experts; many tokens read nearly all);
//  - the embedding reads only the n rows it gathers; the head computes logits of the
//    last token only (as the runtime does), so its cost does not grow with n.
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/model/hparams.h"
#include "runtime/schedule/model_fingerprint.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {
struct RoutingProfile;
}

namespace pshard::planner {

// Same values and order as pshard::SubLayerKind in runtime/model/sublayer.h.
enum class SubLayerKind : uint8_t { kEmbed = 0, kAttention = 1, kFfn = 2, kMoe = 3, kHead = 4 };

const char* sublayer_kind_name(SubLayerKind kind); // "embed", "attn", "ffn", "moe", "head"

// One GGUF tensor a sub-layer owns, located in the file (never its bytes).
struct TensorRef {
  std::string name;          // GGUF name, "blk.3.attn_q.weight"
  std::vector<int64_t> dims; // dims[0] is the row (contiguous) dimension
  TensorType type = TensorType::kF32;
  uint64_t file_offset = 0;  // absolute byte offset in its GGUF file (data_offset + offset)
  uint64_t bytes = 0;
  uint32_t shard = 0;        // the file of a split model holding it (split.no); 0 unsplit
};

// A group of equal matrices of one sub-layer, priced together: for each token the
// sub-layer multiplies by `count` matrices of rows × cols (for MoE experts: `count`
// experts each token, chosen among `pool` experts in the tensor).
struct MatmulGroup {
  TensorType type = TensorType::kF32;
  int64_t rows = 0;           // output features
  int64_t cols = 0;           // input features
  uint64_t matrix_bytes = 0;  // bytes of ONE matrix (one expert's slice for MoE)
  int64_t count = 1;          // matrices applied per token
  int64_t pool = 1;           // matrices in the tensor (n_expert for MoE experts, else count)
  bool last_token_only = false; // the head: logits of the last token only
  bool expert_gate_up = false;  // routed experts' gate or up: fused in one grouped kernel
};

struct SubLayerInfo {
  std::string name;   // "embed", "attn[3]", "ffn[3]", "moe[3]", "head"
  SubLayerKind kind = SubLayerKind::kEmbed;
  int64_t layer = -1; // -1 for embed and head
  std::vector<TensorRef> tensors;
  uint64_t weight_bytes = 0;           // all tensors, as stored in the GGUF
  std::vector<MatmulGroup> matmuls;    // empty for embed
  uint64_t embed_row_bytes = 0;        // embed only: bytes gathered per token
  // Attention only: KV values cached per position (kv_dim + v_dim) and attention geometry.
  int64_t kv_values_per_token = 0;
  int64_t n_head = 0, head_dim = 0;
  // Attention only: the positions a query sees (Gemma's sliding-window layers); 0: all.
  int64_t attn_window = 0;
  // A recurrent layer in attention's place (Gated DeltaNet; delta_net.d_k 0: none): its
  // state is a fixed number of cache rows of kv_dim K values and the rest V values
  // (runtime/kernels/delta_net.h), read and written by every pass whatever the context;
  // nothing grows per position. Its switches' state copies (a few MiB) are not priced.
  DeltaNetDims delta_net;
  int64_t kv_dim = 0;
  bool recurrent() const { return delta_net.d_k > 0; }
  // The cache bytes of its state for a KV element type (0 unless recurrent).
  uint64_t state_bytes(TensorType kv_type) const;
  // The recurrence's FLOPs per token: the conv and four sweeps of each head's state.
  double state_flops_per_token() const;
  // MoE only.
  int64_t n_expert = 0, n_expert_used = 0;
  uint64_t expert_bytes = 0;           // bytes of one expert (its gate+up+down slices)
  uint64_t shared_bytes = 0;           // router and norms: read by every token
  // Per-token probability of each expert being routed (a routing profile; sums to
  // n_expert_used). Empty: uniform, n_expert_used / n_expert each.
  std::vector<double> expert_prob;

  // Expected distinct experts touched by n tokens (MoE), n_expert_used ≤ result ≤ n_expert:
  // Σ_e 1 − (1 − p_e)^n over the experts' routing probabilities (uniform without a profile).
  double expected_experts(int64_t n_tokens) const;
  // Worst case: min(n_expert, n·k). What a streaming slot must hold for this tier.
  int64_t max_experts(int64_t n_tokens) const;
  // Expert ids hottest first (by expert_prob; equal probabilities, as in uniform
  // routing, by index): the order hot experts are kept resident in. Empty unless MoE.
  std::vector<int32_t> experts_by_heat() const;
  // With the `n_hot` hottest experts resident: the expected distinct NON-resident
  // experts n tokens route to (what a streamed pass copies), Σ over the others of
  // 1 − (1 − p_e)^n, and the worst case min(n_expert − n_hot, n·k) a slot must hold.
  double expected_streamed_experts(int64_t n_tokens, int64_t n_hot) const;
  int64_t max_streamed_experts(int64_t n_tokens, int64_t n_hot) const;
  // expected_streamed_experts(n_tokens, h) for every h in [0, n_expert] at once.
  std::vector<double> streamed_experts_by_rank(int64_t n_tokens) const;
  // Weight bytes the pass reads (expected), and the most it may need on the GPU.
  double weight_bytes_read(int64_t n_tokens) const;
  uint64_t weight_bytes_needed(int64_t n_tokens) const;
  double flops(int64_t n_tokens, int64_t ctx) const;
  // The cached positions one query reads at context ctx: ctx, or the window if smaller.
  int64_t attended(int64_t ctx) const {
    return attn_window > 0 && attn_window < ctx ? attn_window : ctx;
  }
  // KV cache bytes per cached position for a KV element type (0 unless attention).
  uint64_t kv_bytes_per_token(TensorType kv_type) const;
  // The positions this layer's cache keeps with `positions` cached: all, or a
  // sliding-window layer's ring of `ring` rows (0: no rings; kv_ring_positions).
  int64_t kv_positions_held(int64_t ring, int64_t positions) const;
  // Whether this layer's cache is a ring of `ring` rows (a sliding-window attention).
  bool kv_is_ring(int64_t ring) const { return ring > 0 && attn_window > 0; }
  // Bytes moved from memory: weights read + KV read (ctx positions) + KV written.
  double bytes_moved(int64_t n_tokens, int64_t ctx, TensorType kv_type) const;
  // The type holding most of the weight bytes (the one whose kernels dominate).
  TensorType dominant_type() const;
};

struct ModelGraph {
  std::string name;         // general.name
  std::string architecture; // general.architecture: "llama", "qwen3moe", …
  ModelHParams hparams;
  std::vector<SubLayerInfo> sublayers; // execution order
  ModelFingerprint fingerprint;
  uint64_t file_size = 0;

  uint64_t total_weight_bytes() const;
  // The hidden state that crosses PCIe when consecutive sub-layers change device (F32).
  uint64_t hidden_bytes(int64_t n_tokens) const;
  // GPU activation buffers for a pass of n tokens (hidden, q/k/v, ffn, logits…).
  uint64_t activation_bytes(int64_t n_tokens, int64_t n_logit_rows = 1) const;
  // GPU attention scratch for n tokens: scores of one tile of kAttentionTile positions
  // per head (tiled attention, so it does not grow with the context).
  uint64_t attention_workspace_bytes(int64_t n_tokens) const;
  int index_of(const std::string& sublayer_name) const; // -1 when absent
};

inline constexpr int64_t kAttentionTile = 256;

// Fails (naming the key or tensor) on anything read_model_hparams refuses or on a
// tensor the model's layout (runtime/model/tensor_layout.h) expects but the file lacks or
// has in another shape, or a tensor no layout names.
Result<ModelGraph> build_model_graph(const gguf::GgufFile& file);

// A graph from hyperparameters alone, every matrix of `type` (property tests and
// benchmarks on random shapes without writing files). Tensor offsets are synthetic.
ModelGraph synthetic_model_graph(const ModelHParams& hp, TensorType type);

// Sets every MoE sub-layer's expert_prob from a routing profile (pshard-profile
// --routing), which must have been taken on a model of this shape: the same expert
// count, experts per token and MoE layers (a profile of another quantization of the same
// model is fine). Layers the profile saw no tokens for stay uniform.
Status apply_routing_profile(ModelGraph& graph, const RoutingProfile& routing);

} // namespace pshard::planner
