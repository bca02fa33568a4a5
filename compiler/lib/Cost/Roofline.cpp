// Roofline of one sub-layer: each matrix group and the attention core are priced as
// max(flops / achieved FLOP/s, bytes / bandwidth), summed, plus a fixed overhead. Pricing
// per group (not the whole sub-layer at once) matters for mixed-type models and for MoE,
// where the router is a tiny F32 matmul and the experts are large quantized ones.
//
// A MoE block's routed experts on the GPU are priced one of two ways. With a profile's
// grouped cells (schema 1.3, the CUDA backend's grouped kernels) they are two launches
// for every expert a pass touches — gate and up fused, then down — each timed by its
// cell at the pass's tokens per expert and bytes read, plus one combine launch. Without
// them (older profiles, the emulated GPU) each routed expert's matrices are their own
// launches, as the per-expert dispatch runs them.
#include "pshard/Planner/Estimator.h"

#include <algorithm>

namespace pshard::planner {
namespace {

struct Work {
  double flops = 0;
  double bytes = 0;
};

// A MoE block's kernels besides its routed experts (norm, router, top-k, weights,
// residual), and per routed expert (gate, up, down) or grouped (gate+up, down, combine).
constexpr int kMoeBlockKernels = 6;
constexpr int kKernelsPerExpert = 3;
constexpr int kGroupedExpertKernels = 3;
constexpr int kGroupedProductKernels = 2; // of those, timed by the grouped cells

// Kernel launches of one sub-layer on the GPU: norms, matmuls, RoPE, attention, adds.
int kernels_of(const SubLayerInfo& s, bool grouped) {
  switch (s.kind) {
  case SubLayerKind::kEmbed: return 1;
  case SubLayerKind::kAttention: return 8;
  case SubLayerKind::kFfn: return 6;
  case SubLayerKind::kMoe:
    return kMoeBlockKernels +
           (grouped ? kGroupedExpertKernels
                    : kKernelsPerExpert * static_cast<int>(std::max<int64_t>(s.n_expert_used, 1)));
  case SubLayerKind::kHead: return 2;
  }
  return 1;
}

bool routed_experts(const MatmulGroup& m) { return m.pool > m.count; }

// The routed experts of one GPU pass of n tokens as the grouped kernels run them: the
// expected distinct experts' gate and up in one launch, their down in another, each
// timed by the profile's cell (launch included).
double grouped_experts_s(const SubLayerInfo& s, const MachineModel& machine, int64_t n) {
  const double distinct = std::max(s.expected_experts(n), 1.0);
  const double per_expert = std::max(
      1.0, static_cast<double>(n) * static_cast<double>(std::max<int64_t>(s.n_expert_used, 1)) /
               distinct);
  double seconds = 0;
  for (const bool gate_up : {true, false}) {
    double bytes = 0;
    const MatmulGroup* first = nullptr;
    for (const auto& m : s.matmuls)
      if (routed_experts(m) && m.expert_gate_up == gate_up) {
        bytes += distinct * static_cast<double>(m.matrix_bytes);
        first = first ? first : &m;
      }
    if (first)
      seconds += bytes / machine.gpu_grouped_expert_bytes_per_s(first->type, gate_up, per_expert,
                                                                bytes);
  }
  return seconds;
}

// The work of one matrix group at n tokens: how many distinct matrices are read and how
// many tokens each sees on average.
struct GroupWork {
  Work work;
  double tokens_per_matrix = 1;
};

GroupWork group_work(const SubLayerInfo& s, const MatmulGroup& m, int64_t n) {
  GroupWork g;
  const double tokens = m.last_token_only ? 1.0 : static_cast<double>(n);
  double matrices = static_cast<double>(m.count);
  if (m.pool > m.count) // experts: distinct ones touched by n tokens
    matrices = s.expected_experts(m.last_token_only ? 1 : n);
  g.work.flops = 2.0 * static_cast<double>(m.rows) * static_cast<double>(m.cols) *
                 static_cast<double>(m.count) * tokens;
  g.work.bytes = matrices * static_cast<double>(m.matrix_bytes);
  g.tokens_per_matrix = std::max(1.0, tokens * static_cast<double>(m.count) / matrices);
  return g;
}

double roofline(const Work& w, double flops_per_s, double bytes_per_s) {
  return std::max(w.flops / flops_per_s, w.bytes / bytes_per_s);
}

// The sequences a pass of `tier` tokens holds: as many as asked, never more than its tokens.
int64_t sequences_in(int64_t tier, int64_t sequences) {
  return std::clamp<int64_t>(sequences, 1, tier);
}

} // namespace

SubLayerCost estimate_sublayer(const SubLayerInfo& s, const ModelGraph& graph,
                               const MachineModel& machine, int64_t tier, int64_t n_ctx,
                               TensorType kv_type, int threads, int64_t sequences) {
  SubLayerCost c;
  const int64_t n_seq = sequences_in(tier, sequences);
  const auto seqs = static_cast<double>(n_seq);
  const int64_t queries = tier / n_seq; // one sequence's: the attention cells are measured so
  const bool gpu = machine.has_gpu();
  const double cpu_bw = machine.cpu_read_bandwidth(threads, Load::kIdle);
  const double cpu_bw_loaded = machine.cpu_read_bandwidth(threads, Load::kUnderLoad);
  const double gpu_bw = gpu ? machine.gpu_read_bandwidth() : 1.0;
  const bool grouped = gpu && s.kind == SubLayerKind::kMoe && machine.has_gpu_grouped_experts() &&
                       std::any_of(s.matmuls.begin(), s.matmuls.end(), routed_experts);

  if (s.kind == SubLayerKind::kEmbed) { // a gather: bytes only
    const Work w{0, s.weight_bytes_read(tier) + static_cast<double>(graph.hidden_bytes(tier))};
    c.cpu_s = w.bytes / cpu_bw;
    c.cpu_loaded_s = w.bytes / cpu_bw_loaded;
    c.gpu_s = w.bytes / gpu_bw;
  }
  for (const auto& m : s.matmuls) {
    const GroupWork g = group_work(s, m, tier);
    const auto tokens = static_cast<int64_t>(g.tokens_per_matrix + 0.5);
    c.cpu_s += roofline(
        g.work, machine.cpu_matmul_flops(m.type, tokens, m.matrix_bytes, threads, Load::kIdle, m.cols),
        cpu_bw);
    c.cpu_loaded_s += roofline(
        g.work,
        machine.cpu_matmul_flops(m.type, tokens, m.matrix_bytes, threads, Load::kUnderLoad, m.cols),
        cpu_bw_loaded);
    if (gpu && !(grouped && routed_experts(m)))
      c.gpu_s += roofline(g.work, machine.gpu_matmul_flops(m.type, tokens, m.matrix_bytes, m.cols),
                          gpu_bw);
  }
  if (grouped)
    c.gpu_s += grouped_experts_s(s, machine, tier);
  if (gpu && s.kind == SubLayerKind::kMoe)
    for (const auto& m : s.matmuls)
      if (routed_experts(m)) { // what each side of a split block runs
        const auto tokens = static_cast<int64_t>(group_work(s, m, tier).tokens_per_matrix + 0.5);
        c.cpu_side_beside =
            machine.cpu_beside_device_slowdown(m.type, tokens, m.matrix_bytes, threads);
        c.gpu_side_beside = machine.device_beside_cpu_slowdown(m.type, tokens, m.matrix_bytes);
        break;
      }
  const double kv_per_token = static_cast<double>(s.kv_bytes_per_token(kv_type));
  if (s.recurrent()) { // the state read and written, the recurrence's sweeps over it
    const Work w{s.state_flops_per_token() * static_cast<double>(tier),
                 2.0 * static_cast<double>(s.state_bytes(kv_type)) * seqs};
    c.cpu_s += roofline(w, machine.cpu_attention_flops(1, tier, threads, Load::kIdle), cpu_bw);
    c.cpu_loaded_s +=
        roofline(w, machine.cpu_attention_flops(1, tier, threads, Load::kUnderLoad), cpu_bw_loaded);
    if (gpu)
      c.gpu_s += roofline(w, machine.gpu_attention_flops(1, tier), gpu_bw);
  } else if (s.kind == SubLayerKind::kAttention) { // a sliding window reads only its positions
    const int64_t seen = s.attended(n_ctx);
    const Work w{4.0 * static_cast<double>(s.n_head * s.head_dim) * static_cast<double>(seen) *
                     static_cast<double>(tier),
                 kv_per_token * (static_cast<double>(seen) * seqs + static_cast<double>(tier))};
    c.cpu_s +=
        roofline(w, machine.cpu_attention_flops(seen, queries, threads, Load::kIdle), cpu_bw);
    c.cpu_loaded_s += roofline(
        w, machine.cpu_attention_flops(seen, queries, threads, Load::kUnderLoad), cpu_bw_loaded);
    if (gpu)
      c.gpu_s += roofline(w, machine.gpu_attention_flops(seen, queries), gpu_bw);
  }
  c.cpu_s += machine.cpu_overhead_s();
  c.cpu_loaded_s += machine.cpu_overhead_s();
  if (!gpu)
    return c;
  // The grouped cells' own launches are in their times already.
  const double launch = machine.gpu_launch_overhead_s();
  const int kernels = kernels_of(s, grouped);
  c.gpu_s += launch * (kernels - (grouped ? kGroupedProductKernels : 0));
  if (grouped)
    c.gpu_fixed_s = launch * kernels;
  // CUDA graphs replay decode passes (one fixed shape per plan); the simulation applies
  // the saving only to passes that never leave the device.
  if (tier == 1 && machine.has_gpu_graphs())
    c.gpu_graph_saving_s = std::clamp(
        (launch - machine.gpu_graph_launch_overhead_s()) * kernels, 0.0, c.gpu_s);

  // Streaming: what the pass copies (expected) and what the slot must hold (worst case).
  // A streamed attention block's KV cache lives on the host (only resident attention keeps
  // its KV in VRAM), so the positions it reads — a sliding window's only — cross the link.
  // A recurrent layer's state crosses whole, and goes back whole.
  // With several sequences each one's positions (or state) cross; the slot is sized for one
  // (a batch reads its host pages in place: runtime/batch/batched_hybrid_session.h).
  const double state = static_cast<double>(s.state_bytes(kv_type));
  const double kv_copy =
      s.recurrent() ? state : kv_per_token * static_cast<double>(s.attended(n_ctx));
  c.stream_bytes = static_cast<uint64_t>(s.weight_bytes_read(tier) + kv_copy * seqs);
  c.slot_bytes = s.weight_bytes_needed(tier) + static_cast<uint64_t>(kv_copy);
  if (s.kind == SubLayerKind::kEmbed)
    c.stream_bytes = c.slot_bytes = s.weight_bytes_needed(tier);
  c.copy_s = machine.h2d_seconds(c.stream_bytes, Load::kIdle);
  c.copy_loaded_s = machine.h2d_seconds(c.stream_bytes, Load::kUnderLoad);
  if (kv_copy > 0) { // the new positions go back to the host cache
    const auto written = static_cast<uint64_t>(
        s.recurrent() ? state * seqs : kv_per_token * static_cast<double>(tier));
    c.copy_s += machine.d2h_seconds(written, Load::kIdle);
    c.copy_loaded_s += machine.d2h_seconds(written, Load::kUnderLoad);
  }
  c.copy_needs_input = s.kind == SubLayerKind::kMoe && s.max_experts(tier) < s.n_expert;
  return c;
}

SubLayerCosts estimate_costs(const ModelGraph& graph, const MachineModel& machine, int64_t tier,
                             int64_t n_ctx, TensorType kv_type, int threads, int64_t sequences) {
  SubLayerCosts costs;
  costs.tier = tier;
  costs.n_ctx = n_ctx;
  costs.sublayers.reserve(graph.sublayers.size());
  for (const auto& s : graph.sublayers)
    costs.sublayers.push_back(
        estimate_sublayer(s, graph, machine, tier, n_ctx, kv_type, threads, sequences));
  if (machine.has_gpu()) {
    costs.h2d_hidden_s = machine.h2d_seconds(graph.hidden_bytes(tier), Load::kIdle);
    costs.d2h_hidden_s = machine.d2h_seconds(graph.hidden_bytes(tier), Load::kIdle);
    costs.d2h_logits_s = machine.d2h_seconds( // one token's logits for each sequence
        static_cast<uint64_t>(graph.hparams.n_vocab) * sizeof(float) *
            static_cast<uint64_t>(sequences_in(tier, sequences)),
        Load::kIdle);
    costs.h2d_tokens_s = machine.h2d_seconds(static_cast<uint64_t>(tier) * 4, Load::kIdle);
  }
  return costs;
}

} // namespace pshard::planner
