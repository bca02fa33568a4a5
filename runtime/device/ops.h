// The operations of the Llama forward pass, as one small interface that both the
// host CPU and a device implement, so the sub-layer code (runtime/model) is written
// once and runs on either.
//
//   CpuOps cpu(pool);                         // runtime/backends/cpu: runs now
//   Ops& dev = device.compute();              // a Device: enqueued on its compute queue
//   attention_forward(pass_on(cpu), w, kv);   // the same code, either place
//
// Pointers: every float* and every MatrixView::data handed to an Ops is an address in
// the memory that Ops executes on — host memory (the model's mapping, host vectors)
// for the CPU, device memory (the VRAM arena) for a device. Sub-layer code may do
// pointer arithmetic on them but never dereferences them. Token ids are the exception:
// they are always host memory, and a device copies them as it needs.
//
// Ordering: calls on one Ops execute in call order (a CPU runs each before returning;
// a device queues them). A device's ops never fail at the call: a backend records its
// first failure and reports it at Device::synchronize (as CUDA's sticky errors do).
//
// Determinism: every implementation must give the CPU's results bit for bit on the
// cpu and emu backends (the emu runs the very same CPU kernels); the CUDA backend
// matches within float tolerance. Nothing here may depend on how work is split.
#pragma once

#include "runtime/kernels/delta_net.h"
#include "runtime/kernels/matmul.h"
#include "runtime/kernels/ops.h"
#include "runtime/model/arch/arch_family.h"
#include "runtime/tokenizer/token_id.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace pshard {

// One layer's KV cache: K rows of kv_dim values and V rows of v_dim (0: kv_dim; DeepSeek's
// latent attention caches values narrower than keys) for positions [0, n_ctx), each of
// its element type (F32, F16 or Q8_0: runtime/model/kv_types.h). Contiguous (pages null):
// position p's rows at k/v + p * row bytes. Paged (a sequence of a shared page pool,
// runtime/batch): position p lives in page pages[p / page_tokens] at row
// p % page_tokens, page q's rows starting at k/v + q * page_tokens * row bytes. The page
// table is in the memory of the Ops that reads it. A ring (a sliding-window layer of one
// sequence, runtime/model/kv_ring.h): position p at row p % ring, ring rows in all.
struct KvView {
  uint8_t* k = nullptr;
  uint8_t* v = nullptr;
  int64_t n_ctx = 0;
  int64_t kv_dim = 0;
  const int32_t* pages = nullptr;
  int64_t page_tokens = 0;
  int64_t ring = 0; // 0: no ring
  TensorType k_type = TensorType::kF32;
  TensorType v_type = TensorType::kF32;
  int64_t v_dim = 0;
  // A Gated DeltaNet layer (runtime/kernels/delta_net.h): its state's rows, whatever the
  // context; 0 for attention.
  int64_t state_rows = 0;

  int64_t v_values() const { return v_dim > 0 ? v_dim : kv_dim; }
  size_t k_row_bytes() const { return tensor_row_bytes(k_type, kv_dim); }
  size_t v_row_bytes() const { return tensor_row_bytes(v_type, v_values()); }
  // The row index of position pos in the layer's storage.
  size_t row_index(int64_t pos) const {
    if (!pages)
      return static_cast<size_t>(ring > 0 ? pos % ring : pos);
    return static_cast<size_t>(pages[pos / page_tokens]) * static_cast<size_t>(page_tokens) +
           static_cast<size_t>(pos % page_tokens);
  }
  uint8_t* k_row(int64_t pos) const { return k + row_index(pos) * k_row_bytes(); }
  uint8_t* v_row(int64_t pos) const { return v + row_index(pos) * v_row_bytes(); }
  // This layer's pool seen through one sequence's page table.
  KvView with_pages(const int32_t* table, int64_t n_positions) const {
    KvView view = *this;
    view.pages = table;
    view.n_ctx = n_positions;
    return view;
  }
};

// A Gated DeltaNet layer's state in its cache rows (runtime/kernels/delta_net.h): the
// view's `state_rows` K rows, then as many V rows.
inline DeltaNetState delta_net_state(const DeltaNetDims& d, const KvView& kv) {
  return delta_net_state(d, kv.k, kv.v, kv.state_rows, kv.k_row_bytes());
}

// A Gated DeltaNet layer's own small tensors, in the Ops' memory: the conv's conv_dim rows of
// conv_kernel taps, ssm_a (−exp(A_log)) and dt_bias, n_v_heads values each.
struct DeltaNetWeights {
  const float* conv = nullptr;
  const float* ssm_a = nullptr;
  const float* dt_bias = nullptr;
};

// Attention geometry (grouped-query: n_head query heads share n_head_kv KV heads) and
// what a family changes of its scores.
struct AttentionDims {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  // A head's values (and output) when narrower than its keys (DeepSeek's latent attention:
  // the latent, without the rotated part); 0: head_dim.
  int64_t head_dim_v = 0;
  // Sliding window (Gemma's local layers): a query at position p sees positions
  // [p - window + 1, p] only — or, symmetric_window (a model attending both ways:
  // gemma-embedding), [p - window/2, p + window/2]. 0: the whole past (or text).
  int64_t window = 0;
  bool symmetric_window = false;
  // Chunked attention (Llama 4): a query at p sees [p - p % window, p], its chunk so far.
  bool chunked = false;
  // The scores' factor; 0: 1/sqrt(head_dim).
  float scale = 0.0f;
  // Soft-capping (Gemma 2): each scaled score s becomes softcap * tanh(s / softcap)
  // before the softmax. 0: off.
  float softcap = 0.0f;
  // Attention temperature (Mistral 3): the scores of the query at position pos are
  // further scaled by 1 + temp_scale · ln(floor((pos + 1) / temp_length) + 1). 0: off.
  float temp_scale = 0.0f;
  int64_t temp_length = 0;
  // Attention sinks (gpt-oss): n_head logits in the Ops' memory, head h's joining the
  // denominator of every softmax of head h (its value row is zero). Null: none.
  const float* sinks = nullptr;
  // false (encoders): every query of an attention call sees the call's positions through
  // its last (pos0 + n_tokens - 1), later ones too; the caller makes the call hold the
  // whole text.
  bool causal = true;

  int64_t value_dim() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
  float score_scale() const {
    return scale > 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  }
  // The scores' factor for the query at `pos`.
  float score_scale(int64_t pos) const {
    if (temp_scale == 0.0f || temp_length <= 0)
      return score_scale();
    const float steps = std::floor(static_cast<float>(pos + 1) / static_cast<float>(temp_length));
    return score_scale() * (1.0f + temp_scale * std::log(steps + 1.0f));
  }
  // The first position a query at `pos` sees.
  int64_t first_visible(int64_t pos) const {
    if (window > 0 && symmetric_window && !causal)
      return pos > window / 2 ? pos - window / 2 : 0;
    if (window > 0 && chunked)
      return pos - pos % window;
    return window > 0 && pos + 1 > window ? pos + 1 - window : 0;
  }
  // One past the last position a query at `pos` sees, in an attention call whose last
  // token is at call_end - 1.
  int64_t visible_end(int64_t pos, int64_t call_end) const {
    if (causal)
      return pos + 1;
    if (window > 0 && symmetric_window)
      return pos + window / 2 + 1 < call_end ? pos + window / 2 + 1 : call_end;
    return call_end;
  }
};

// n_expert matrices of equal shape (also an attention's per-head matrices, one per head:
// DeepSeek's attn_k_b/attn_v_b): expert e starts at `first.data + e * stride`,
// unless `placed` is non-empty — then at placed[e] (a streaming slot holding only the
// experts a pass routes to; null for the others, which the pass never reads).
struct ExpertMatrices {
  MatrixView first;
  int64_t n_expert = 0;
  std::vector<const uint8_t*> placed;

  size_t stride() const { return static_cast<size_t>(first.rows) * first.row_bytes; }
  MatrixView expert(int64_t e) const {
    MatrixView v = first;
    v.data = placed.empty() ? first.data + static_cast<size_t>(e) * stride()
                            : placed[static_cast<size_t>(e)];
    return v;
  }
};

// The routes of one MoE pass, decided on the host (host memory, like token ids): for
// each token its k experts in ascending index order and their renormalised weights —
// the experts the executor copied into a streaming slot (ExpertMatrices::placed).
struct MoeRoutes {
  int64_t n_tokens = 0;
  int64_t k = 0;
  std::vector<int32_t> experts; // n_tokens x k
  std::vector<float> weights;   // n_tokens x k
};

// How a pass's router logits choose and weigh its experts: probabilities by a softmax over
// all experts or each logit's sigmoid; the top k of probability + selection_bias (null:
// none; n_expert values in the Ops' memory), ties to the lower index — with n_groups > 1,
// only among the experts of the n_groups_used groups (n_expert / n_groups consecutive
// experts each) whose two best choosing scores sum highest (DeepSeek-V3's group-limited
// routing, as llama.cpp computes it); weights the unbiased probabilities of those k,
// renormalised to sum to one when `normalize`, times `scale`.
struct MoeGating {
  ExpertGating func = ExpertGating::kSoftmax;
  bool normalize = true;
  float scale = 1.0f;
  const float* selection_bias = nullptr;
  int64_t n_groups = 1;
  int64_t n_groups_used = 1;
  // Llama 4: each expert's input rows are multiplied by their weights, its output summed as
  // it is (the weight applied before the FFN, not after).
  bool weight_inputs = false;
};

// The experts of one MoE block and the scratch its dispatch uses (sized for n tokens:
// expert_in and expert_out n x n_embd, gate and up n x n_ff).
//
// `routes`, when set, are the routes the host computed from this pass's router logits,
// and the placed experts are exactly theirs: a device whose routing could differ from
// the host's in the last bit (CUDA: another softmax, another summation order) must use
// them, or a near-tie would pick an expert that was never copied (a null address). The
// cpu and emu compute bit-identical logits with the host's own kernels, so their
// routing equals these routes and they may recompute it.
struct MoeDispatch {
  ExpertMatrices gate, up, down;
  int64_t n_expert_used = 0;
  int64_t n_embd = 0;
  int64_t n_ff = 0;
  float* expert_in = nullptr;
  float* expert_out = nullptr;
  float* gate_buf = nullptr;
  float* up_buf = nullptr;
  std::shared_ptr<const MoeRoutes> routes = nullptr; // host-decided routes, or null (route here)
  // How the router's logits choose and weigh the experts.
  MoeGating gating;
  // The experts' gate activation (SiLU, or gpt-oss's clamped SwiGLU) and their biases
  // (gpt-oss; null for the others): expert e's gate/up row at e * n_ff, down's at
  // e * n_embd, in the Ops' memory.
  FfnActivation activation = FfnActivation::kSilu;
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  const float* down_bias = nullptr;
};

class Ops {
public:
  virtual ~Ops() = default;

  // y[t] = rms_norm(x[t]) * weight for n_tokens rows of d values (x and y may alias); a null
  // weight: no factor (Llama 4's q/k norm).
  virtual void rms_norm(const float* x, const float* weight, float* y, int64_t n_tokens, int64_t d,
                        float eps) = 0;
  // y[t] = layer_norm(x[t]) * weight + bias for n_tokens rows of d values (kernels/ops.h's
  // LayerNorm; x and y may alias).
  virtual void layer_norm(const float* x, const float* weight, const float* bias, float* y,
                          int64_t n_tokens, int64_t d, float eps) = 0;
  // y[n_tokens x w.rows] = x[n_tokens x w.cols] * W^T, W in this Ops' memory.
  virtual void matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y) = 0;
  // RoPE on n_tokens rows of n_heads heads; token t has position pos0 + t — or, with
  // p.positions (M-RoPE, p.sections), positions p.positions[3t .. 3t+2], which are host
  // memory like token ids (a device copies them; CUDA does not take them yet and reports
  // it at synchronize). Rows are dense (n_heads * p.head_dim values each).
  virtual void rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t pos0,
                    const RopeParams& p) = 0;
  // Writes K and V rows of n_tokens tokens at positions [pos0, pos0 + n_tokens) (k: kv_dim
  // values per token, v: v_values()).
  virtual void kv_append(const KvView& kv, const float* k, const float* v, int64_t pos0,
                         int64_t n_tokens) = 0;
  // Causal attention of n_tokens queries (token t at pos0 + t sees positions
  // [shape.first_visible(pos0 + t), shape.visible_end(pos0 + t, pos0 + n_tokens)): with
  // shape.causal false, through pos0 + n_tokens - 1 or its symmetric window) over the cache, scores
  // scaled by shape.score_scale() and soft-capped by shape.softcap; out is n_tokens x n_head *
  // shape.value_dim().
  virtual void attention(const float* q, const KvView& kv, const AttentionDims& shape, int64_t pos0,
                         int64_t n_tokens, float* out) = 0;
  // out[i] = silu(gate[i]) * up[i] over n values.
  virtual void silu_mul(const float* gate, const float* up, float* out, int64_t n) = 0;
  // out[i] = gelu(gate[i]) * up[i] over n values, GELU's tanh approximation (GeGLU).
  virtual void gelu_mul(const float* gate, const float* up, float* out, int64_t n) = 0;
  // x[i] = gelu(x[i]) in place over n values, GELU's exact (erf) form (an encoder's FFN).
  virtual void gelu(float* x, int64_t n) = 0;
  // out[i] = gelu(gate[i]) * up[i] over n values, GELU's exact form (ModernBERT's GeGLU).
  virtual void gelu_erf_mul(const float* gate, const float* up, float* out, int64_t n) = 0;
  // gpt-oss's clamped SwiGLU over n values: with g = min(gate[i], 7) and u = clamp(up[i],
  // -7, 7), out[i] = g * sigmoid(1.702 g) * (u + 1).
  virtual void swiglu_oai(const float* gate, const float* up, float* out, int64_t n) = 0;
  // x[i] *= s over n values.
  virtual void scale(float* x, float s, int64_t n) = 0;
  // x[i] = cap * tanh(x[i] / cap) over n values (Gemma 2's final logits).
  virtual void softcap(float* x, float cap, int64_t n) = 0;
  // y[i] += x[i] over n values.
  virtual void add(float* y, const float* x, int64_t n) = 0;
  // y[t][i] += bias[i] for n_tokens rows of d values (bias in this Ops' memory).
  virtual void add_bias(float* y, const float* bias, int64_t n_tokens, int64_t d) = 0;
  // y[t][i] += sigmoid(gate[t]) * x[t][i] for n_tokens rows of d values (a shared
  // expert's output scaled by its gate logit).
  virtual void add_gated(float* y, const float* x, const float* gate, int64_t n_tokens,
                         int64_t d) = 0;
  // Per-head products (DeepSeek's attn_k_b / attn_v_b: w.n_expert matrices, one per head):
  // head h reads token t's w.first.cols values at x + t * x_stride + h * x_head and writes
  // its w.first.rows at y + t * y_stride + h * y_head (floats; x and y do not overlap).
  virtual void matmul_heads(const ExpertMatrices& w, const float* x, int64_t x_stride,
                            int64_t x_head, int64_t n_tokens, float* y, int64_t y_stride,
                            int64_t y_head) = 0;
  // y[r * y_stride + i] = x[r * x_stride + i] for n_rows rows of `width` values (strides in
  // floats; x and y do not overlap): part of each row moved into another layout (DeepSeek's
  // latent attention gathers and scatters per-head slices this way).
  virtual void copy_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride,
                         int64_t n_rows, int64_t width) = 0;
  // x[i] *= sigmoid(gate[i]) over n values (Qwen3-Next's gated attention output).
  virtual void sigmoid_mul(float* x, const float* gate, int64_t n) = 0;
  // One sequence's pass through a Gated DeltaNet layer's recurrence (kernels/delta_net.h's
  // delta_net_forward): `mixed` (n_tokens x dims.conv_dim()) convolved in place, the state
  // in `state`'s rows read and written (a zero state first at pos0 0), out n_tokens x
  // dims.value_dim().
  virtual void delta_net(const DeltaNetDims& dims, const DeltaNetWeights& w, float* mixed,
                         const float* b, const float* a, int64_t ba_stride, const KvView& state,
                         int64_t pos0, int64_t n_tokens, float* out) = 0;
  // out[t] = row tokens[t] of the table, as floats (tokens are host memory).
  virtual void embed_rows(const MatrixView& table, std::span<const TokenId> tokens, float* out) = 0;
  // The MoE block after its router matmul: router_logits (n_tokens x n_expert) turned
  // into probabilities in place and the top-k experts per token chosen and weighed as
  // moe.gating says, each expert's gated FFN
  // over the tokens routed to it in expert order, weighted sum into out (n x n_embd).
  virtual void moe_dispatch(const float* x, float* router_logits, const MoeDispatch& moe,
                            int64_t n_tokens, float* out) = 0;
};

// out = act(gate) * up over n values, by the family's gate activation.
inline void gated_activation(Ops& ops, FfnActivation act, const float* gate, const float* up,
                             float* out, int64_t n) {
  switch (act) {
  case FfnActivation::kSilu:
    ops.silu_mul(gate, up, out, n);
    return;
  case FfnActivation::kGeluTanh:
    ops.gelu_mul(gate, up, out, n);
    return;
  case FfnActivation::kGeluErf:
    ops.gelu_erf_mul(gate, up, out, n);
    return;
  case FfnActivation::kSwigluOai:
    ops.swiglu_oai(gate, up, out, n);
    return;
  }
}

} // namespace pshard
