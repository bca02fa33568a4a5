// Per-token cost figures of sub-layers (see the conventions in ModelGraph.h).
#include "pshard/Planner/ModelGraph.h"
#include "runtime/model/kv_ring.h"
#include "runtime/model/sublayer.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pshard::planner {

const char* sublayer_kind_name(SubLayerKind kind) {
  switch (kind) {
  case SubLayerKind::kEmbed: return "embed";
  case SubLayerKind::kAttention: return "attn";
  case SubLayerKind::kFfn: return "ffn";
  case SubLayerKind::kMoe: return "moe";
  case SubLayerKind::kHead: return "head";
  }
  return "?";
}

double SubLayerInfo::expected_experts(int64_t n_tokens) const {
  if (n_expert <= 0)
    return 0;
  const double n = static_cast<double>(std::max<int64_t>(n_tokens, 1));
  // Expert e is routed for one token with probability p_e, missed by all n (independent
  // routing) with (1 − p_e)^n. Uniform routing: p_e = k/E, E·(1 − (1 − k/E)^n).
  if (expert_prob.empty()) {
    const double e = static_cast<double>(n_expert);
    const double k = static_cast<double>(std::min(n_expert_used, n_expert));
    return e * (1.0 - std::pow(1.0 - k / e, n));
  }
  double touched = 0;
  for (double p : expert_prob)
    touched += 1.0 - std::pow(1.0 - std::clamp(p, 0.0, 1.0), n);
  return touched;
}

int64_t SubLayerInfo::max_experts(int64_t n_tokens) const {
  return std::min(n_expert, std::max<int64_t>(n_tokens, 1) * n_expert_used);
}

namespace {
// Per-token routing probability of expert e: the profile's, else uniform k/E.
double routing_prob(const SubLayerInfo& s, size_t e) {
  if (s.expert_prob.empty())
    return static_cast<double>(std::min(s.n_expert_used, s.n_expert)) /
           static_cast<double>(s.n_expert);
  return std::clamp(s.expert_prob[e], 0.0, 1.0);
}
} // namespace

std::vector<int32_t> SubLayerInfo::experts_by_heat() const {
  std::vector<int32_t> order;
  if (kind != SubLayerKind::kMoe || n_expert <= 0)
    return order;
  for (int32_t e = 0; e < static_cast<int32_t>(n_expert); ++e)
    order.push_back(e);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return routing_prob(*this, static_cast<size_t>(a)) >
           routing_prob(*this, static_cast<size_t>(b));
  });
  return order;
}

double SubLayerInfo::expected_streamed_experts(int64_t n_tokens, int64_t n_hot) const {
  if (n_expert <= 0)
    return 0;
  const std::vector<int32_t> order = experts_by_heat();
  const double n = static_cast<double>(std::max<int64_t>(n_tokens, 1));
  double touched = 0;
  for (size_t i = static_cast<size_t>(std::clamp<int64_t>(n_hot, 0, n_expert)); i < order.size();
       ++i)
    touched += 1.0 - std::pow(1.0 - routing_prob(*this, static_cast<size_t>(order[i])), n);
  return touched;
}

std::vector<double> SubLayerInfo::streamed_experts_by_rank(int64_t n_tokens) const {
  const std::vector<int32_t> order = experts_by_heat();
  const double n = static_cast<double>(std::max<int64_t>(n_tokens, 1));
  std::vector<double> tail(order.size() + 1, 0.0);
  for (size_t r = order.size(); r-- > 0;)
    tail[r] = tail[r + 1] + 1.0 - std::pow(1.0 - routing_prob(*this, static_cast<size_t>(order[r])), n);
  return tail;
}

int64_t SubLayerInfo::max_streamed_experts(int64_t n_tokens, int64_t n_hot) const {
  return std::min(n_expert - std::clamp<int64_t>(n_hot, 0, n_expert),
                  std::max<int64_t>(n_tokens, 1) * n_expert_used);
}

double SubLayerInfo::weight_bytes_read(int64_t n_tokens) const {
  switch (kind) {
  case SubLayerKind::kEmbed:
    return std::min(static_cast<double>(weight_bytes),
                    static_cast<double>(embed_row_bytes) * static_cast<double>(n_tokens));
  case SubLayerKind::kMoe:
    return static_cast<double>(shared_bytes) +
           expected_experts(n_tokens) * static_cast<double>(expert_bytes);
  default:
    return static_cast<double>(weight_bytes);
  }
}

uint64_t SubLayerInfo::weight_bytes_needed(int64_t n_tokens) const {
  switch (kind) {
  case SubLayerKind::kEmbed: // only the gathered rows go to the GPU
    return std::min(weight_bytes, embed_row_bytes * static_cast<uint64_t>(n_tokens));
  case SubLayerKind::kMoe:
    return shared_bytes + static_cast<uint64_t>(max_experts(n_tokens)) * expert_bytes;
  default:
    return weight_bytes;
  }
}

double SubLayerInfo::flops(int64_t n_tokens, int64_t ctx) const {
  const double n = static_cast<double>(n_tokens);
  double total = 0;
  for (const auto& m : matmuls) {
    const double tokens = m.last_token_only ? 1.0 : n;
    total += 2.0 * static_cast<double>(m.rows) * static_cast<double>(m.cols) *
             static_cast<double>(m.count) * tokens;
  }
  if (recurrent())
    total += state_flops_per_token() * n;
  else if (kind == SubLayerKind::kAttention)
    total += 4.0 * static_cast<double>(n_head * head_dim) * static_cast<double>(attended(ctx)) * n;
  return total;
}

double SubLayerInfo::state_flops_per_token() const {
  const DeltaNetDims& d = delta_net;
  return 4.0 * static_cast<double>(d.n_v_heads * d.d_k * d.d_v) +
         2.0 * static_cast<double>(d.conv_dim() * d.conv_kernel);
}

uint64_t SubLayerInfo::state_bytes(TensorType kv_type) const {
  if (!recurrent())
    return 0;
  const size_t k_row = tensor_row_bytes(kv_type, kv_dim);
  const size_t v_row = tensor_row_bytes(kv_type, kv_values_per_token - kv_dim);
  return static_cast<uint64_t>(delta_net_state_rows(delta_net, k_row, v_row)) * (k_row + v_row);
}

uint64_t SubLayerInfo::kv_bytes_per_token(TensorType kv_type) const {
  if (kind != SubLayerKind::kAttention || recurrent())
    return 0;
  const Result<size_t> bytes = tensor_bytes(kv_type, kv_values_per_token);
  return bytes.ok() ? *bytes : static_cast<uint64_t>(kv_values_per_token) * 4;
}

int64_t SubLayerInfo::kv_positions_held(int64_t ring, int64_t positions) const {
  return kv_is_ring(ring) ? kv_rows_held(ring, positions) : positions;
}

double SubLayerInfo::bytes_moved(int64_t n_tokens, int64_t ctx, TensorType kv_type) const {
  const double kv = static_cast<double>(kv_bytes_per_token(kv_type));
  return weight_bytes_read(n_tokens) + kv * static_cast<double>(attended(ctx)) +
         kv * static_cast<double>(n_tokens) + 2.0 * static_cast<double>(state_bytes(kv_type));
}

TensorType SubLayerInfo::dominant_type() const {
  std::map<TensorType, uint64_t> by_type;
  for (const auto& t : tensors)
    by_type[t.type] += t.bytes;
  TensorType best = TensorType::kF32;
  uint64_t most = 0;
  for (const auto& [type, bytes] : by_type)
    if (bytes > most) {
      most = bytes;
      best = type;
    }
  return best;
}

uint64_t ModelGraph::total_weight_bytes() const {
  uint64_t total = 0;
  for (const auto& s : sublayers)
    total += s.weight_bytes;
  return total;
}

uint64_t ModelGraph::hidden_bytes(int64_t n_tokens) const {
  return static_cast<uint64_t>(n_tokens * hparams.n_embd) * sizeof(float);
}

uint64_t ModelGraph::activation_bytes(int64_t n_tokens, int64_t n_logit_rows) const {
  // Exactly the runtime's buffers (runtime/model/sublayer.h's Activations).
  return static_cast<uint64_t>(activation_floats(hparams, n_tokens, n_logit_rows)) * sizeof(float);
}

uint64_t ModelGraph::attention_workspace_bytes(int64_t n_tokens) const {
  return static_cast<uint64_t>(n_tokens * hparams.n_head * kAttentionTile) * sizeof(float);
}

int ModelGraph::index_of(const std::string& sublayer_name) const {
  for (size_t i = 0; i < sublayers.size(); ++i)
    if (sublayers[i].name == sublayer_name)
      return static_cast<int>(i);
  return -1;
}

} // namespace pshard::planner
