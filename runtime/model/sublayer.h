// The forward pass as the sequence of sub-layers the planner schedules:
// embed, then per layer attn[i] and ffn[i] (or moe[i]), then head. Each runs on
// the activations of one batch of new tokens, through an Ops (runtime/device/ops.h):
// the same code runs on the host CPU or enqueued on a device, with the weights,
// activations and KV cache it is given living in that Ops' memory.
//
//   CpuOps cpu(pool);
//   ForwardPass pass{hp, cpu, act.ptrs(), /*pos0=*/n_past, tokens};
//   for (const SubLayer& s : model.sublayers())
//     run_sublayer(s, pass, host_sublayer_weights(model.weights(), s), kv.layer(s.layer));
#pragma once

#include "runtime/core/zeroed_array.h"
#include "runtime/device/ops.h"
#include "runtime/model/hparams.h"
#include "runtime/model/kv_cache.h"
#include "runtime/model/sublayer_list.h"
#include "runtime/model/weights.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

// One pass's activation buffers, in host or device memory. Only `hidden` (the
// residual stream) lives from one sub-layer to the next; the rest is scratch.
struct ActivationPtrs {
  float *hidden = nullptr, *normed = nullptr, *q = nullptr, *k = nullptr, *v = nullptr,
        *attn_out = nullptr, *proj = nullptr, *gate = nullptr, *up = nullptr;
  // MoE only: router logits, rows gathered for one expert, its output, the weighted sum,
  // and the shared expert's gate logit (one per token; with a shared expert only).
  float *router = nullptr, *expert_in = nullptr, *expert_out = nullptr, *moe_out = nullptr,
        *shexp_gate = nullptr;
  // Latent attention only (DeepSeek): a scratch row for the queries' low rank, then the
  // latent and its rotated part; the older files' form also the normed latent
  // (runtime/model/mla_attention.cpp).
  float *latent = nullptr, *latent_normed = nullptr;
  // Gated attention's gates and a recurrent layer's output gate z; a recurrent layer's b and a
  // (runtime/model/delta_net_attention.cpp). Its mixed q/k/v stream is in q.
  float *attn_gate = nullptr, *ssm_ba = nullptr;
  float* logits = nullptr; // of one token
};

// Floats of the activations of a pass of n tokens whose head computes n_logit_rows rows of
// logits, packed in one buffer. The planner's ModelGraph::activation_bytes is this (it
// sizes the device's activation buffer).
size_t activation_floats(const ModelHParams& hp, int64_t n_tokens, int64_t n_logit_rows = 1);
// Carves activation_floats(hp, n_tokens, ...) floats at `base` into the buffers.
ActivationPtrs carve_activations(const ModelHParams& hp, int64_t n_tokens, float* base);

// Host activations, sized for up to max_tokens new tokens and max_logit_rows logit rows;
// only the rows a pass writes become resident (ZeroedArray).
class Activations {
public:
  void reserve(const ModelHParams& hp, int64_t max_tokens, int64_t max_logit_rows = 1);
  size_t bytes() const { return storage_.size() * sizeof(float); }
  int64_t max_tokens() const { return max_tokens_; }
  const ActivationPtrs& ptrs() const { return ptrs_; }

private:
  int64_t max_tokens_ = 0;
  int64_t max_logit_rows_ = 0;
  ZeroedArray<float> storage_;
  ActivationPtrs ptrs_;
};

struct HeadWeights {
  const float* norm = nullptr;
  MatrixView output;
  const float* norm_b = nullptr;   // the final norm's bias (phimoe), or null
  const float* output_b = nullptr; // the logits' bias (phimoe), or null
};

// Everything one sub-layer reads, in the memory of the Ops that runs it. Only the
// member of the sub-layer's kind is set.
struct SubLayerWeights {
  MatrixView embed;
  AttentionWeights attn;
  const float* rope_freqs = nullptr; // attention: llama3 or LongRoPE's short factors, or null
  const float* rope_long = nullptr;  // attention: LongRoPE's long factors, or null
  FfnWeights ffn;
  MoeWeights moe;
  HeadWeights head;
};

// The weights of sub-layer `s` where the model maps them (host memory).
SubLayerWeights host_sublayer_weights(const ModelWeights& w, const SubLayer& s);

// Calls fn(p) for every weight pointer the member of `kind` holds — matrix data as
// `const uint8_t*&`, vectors as `const float*&` — null ones included, so code that moves
// weights between memories (the executor's rebasing onto a device) cannot miss one.
template <typename Fn> void for_each_weight_pointer(SubLayerKind kind, SubLayerWeights& w, Fn&& fn) {
  switch (kind) {
  case SubLayerKind::kEmbed:
    fn(w.embed.data);
    return;
  case SubLayerKind::kAttention:
    for (VectorWeight* v :
         {&w.attn.norm,     &w.attn.norm_b,     &w.attn.bq,        &w.attn.bk,
          &w.attn.bv,       &w.attn.bo,         &w.attn.q_norm,    &w.attn.k_norm,
          &w.attn.sinks,    &w.attn.post_norm,  &w.attn.embd_norm, &w.attn.embd_norm_b,
          &w.attn.out_norm, &w.attn.out_norm_b, &w.attn.q_a_norm,  &w.attn.kv_a_norm,
          &w.attn.ssm_conv, &w.attn.ssm_a,      &w.attn.ssm_dt,    &w.attn.ssm_norm})
      fn(v->data);
    for (MatrixView* m :
         {&w.attn.wq, &w.attn.wk, &w.attn.wv, &w.attn.wo, &w.attn.pos_embd, &w.attn.token_types,
          &w.attn.wq_a, &w.attn.wq_b, &w.attn.wkv_a, &w.attn.wk_b.first, &w.attn.wv_b.first,
          &w.attn.wkv_b, &w.attn.ssm_qkv, &w.attn.ssm_gate, &w.attn.ssm_ba, &w.attn.ssm_beta,
          &w.attn.ssm_alpha, &w.attn.ssm_out, &w.attn.ssm_in})
      fn(m->data);
    fn(w.rope_freqs);
    fn(w.rope_long);
    return;
  case SubLayerKind::kFfn:
    for (VectorWeight* v : {&w.ffn.norm, &w.ffn.norm_b, &w.ffn.post_norm, &w.ffn.up_bias,
                            &w.ffn.down_bias, &w.ffn.out_norm, &w.ffn.out_norm_b})
      fn(v->data);
    for (MatrixView* m : {&w.ffn.gate, &w.ffn.up, &w.ffn.down})
      fn(m->data);
    return;
  case SubLayerKind::kMoe:
    for (VectorWeight* v : {&w.moe.norm, &w.moe.norm_b, &w.moe.router_bias, &w.moe.gate_bias,
                            &w.moe.up_bias, &w.moe.down_bias, &w.moe.selection_bias})
      fn(v->data);
    for (MatrixView* m : {&w.moe.router, &w.moe.gate.first, &w.moe.up.first, &w.moe.down.first,
                          &w.moe.shexp_gate_inp, &w.moe.shexp.gate, &w.moe.shexp.up,
                          &w.moe.shexp.down})
      fn(m->data);
    return;
  case SubLayerKind::kHead:
    fn(w.head.norm);
    fn(w.head.output.data);
    fn(w.head.norm_b);
    fn(w.head.output_b);
    return;
  }
}

// A run of a pass's tokens that belong to one sequence of a batch: tokens [begin, begin +
// count) of the pass are that sequence's positions [pos0, pos0 + count); `pages` its page
// table in the pool the layer's KvView describes (in the memory of the Ops).
struct SeqSegment {
  int64_t begin = 0;
  int64_t count = 0;
  int64_t pos0 = 0;
  const int32_t* pages = nullptr;
  // The sequence's slot (its SeqId): where a recurrent layer keeps its state in a batch
  // (delta_net_forward).
  int32_t seq = 0;
};

// What a sub-layer reads and writes during one pass. One sequence (segments empty): the
// tokens are positions [pos0, pos0 + n_tokens) of the cache the KvView holds. A batch:
// each segment is one sequence's tokens; only attention looks at segments — every other
// sub-layer treats the tokens as independent rows.
class RoutingRecorder;

struct ForwardPass {
  const ModelHParams& hp;
  Ops& ops;
  const ActivationPtrs& act;
  int64_t pos0 = 0;
  std::span<const TokenId> tokens; // host memory
  std::span<const SeqSegment> segments = {};
  // Tokens whose logits the head computes, in order (act.logits row i: logit_rows[i]);
  // empty: the last token's.
  std::span<const int64_t> logit_rows = {};
  // Host passes only: every MoE sub-layer hands its router logits to this recorder
  // (pshard-profile --routing); `layer` is the sub-layer's, set by run_sublayer.
  RoutingRecorder* routing = nullptr;
  int64_t layer = -1;
  // M-RoPE models (qwen2vl) after an image: 3 rotary positions (t, h, w) per token, host
  // memory; empty: every component is the token's cache position (pos0 + t, or its
  // segment's), which is what text-only prompts are.
  std::span<const int32_t> rope_positions = {};
  // The context the sequences were given (LongRoPE rotates by its long factors past the
  // model's original context); 0: the model's training context.
  int64_t n_ctx = 0;
  // A batch whose sliding-window layers have their own pages (runtime/batch/
  // window_pages.h): `segments` with those layers' page tables; empty: `segments`.
  std::span<const SeqSegment> window_segments = {};
  int64_t n_tokens() const { return static_cast<int64_t>(tokens.size()); }
  int64_t n_logit_rows() const { return logit_rows.empty() ? 1 : static_cast<int64_t>(logit_rows.size()); }
};

void embed_forward(ForwardPass& pass, const MatrixView& table);
// A block's pre-norm (and the final norm) of n rows of n_embd: RMSNorm, or a LayerNorm
// where the family says (ModernBERT); `bias` (phimoe's; null for most) is added to either.
// x and y may alias.
void pre_norm(Ops& ops, const ModelHParams& hp, const float* x, const float* weight,
              const float* bias, float* y, int64_t n);
void attention_forward(ForwardPass& pass, const AttentionWeights& w, const float* rope_freqs,
                       const KvView& kv);
// attention_forward of a recurrent layer (Gated DeltaNet; delta_net_attention.cpp).
void delta_net_forward(ForwardPass& pass, const AttentionWeights& w, const KvView& state);
// attention_forward of a model with latent attention (DeepSeek; mla_attention.cpp).
void latent_attention_forward(ForwardPass& pass, const AttentionWeights& w,
                              const float* rope_freqs, const KvView& kv);
void ffn_forward(ForwardPass& pass, const FfnWeights& w);
// The gated FFN of `w` (SwiGLU, or GeGLU as the model says) over `in` (n_tokens x n_embd:
// act.normed, or an encoder's act.hidden) into out (n_tokens x n_embd), scratch act.gate/up.
void glu_forward(ForwardPass& pass, const FfnWeights& w, const float* in, float* out);
// A block's output `out` (n_tokens x n_embd) into the residual stream act.hidden:
// Gemma's post-norm (when `post_norm` is set) and Granite's residual scale, then the add.
void residual_add(ForwardPass& pass, const VectorWeight& post_norm, float* out);
void moe_forward(ForwardPass& pass, const MoeWeights& w);
// The router's logits (n x n_expert) of the normed rows, its bias added (gpt-oss): what
// every place that routes computes, so they route alike.
void moe_router_logits(Ops& ops, const MoeWeights& w, const float* normed, int64_t n,
                       float* logits);
// How `w`'s router chooses and weighs experts (its selection bias in w's memory).
MoeGating moe_gating_of(const ModelHParams& hp, const MoeWeights& w);
// The dispatch of `w`'s experts over act's scratch (no host routes: the caller sets them).
MoeDispatch moe_dispatch_of(const ModelHParams& hp, const MoeWeights& w, const ActivationPtrs& a);
// The end of moe_forward once act.moe_out holds the routed experts' sum: the shared
// expert (if any) and the residual (an expert-level pass sums its experts itself).
void moe_finish(ForwardPass& pass, const MoeWeights& w);
// Logits of the last token (or of pass.logit_rows) into act.logits, one row each.
void head_forward(ForwardPass& pass, const HeadWeights& w);

// `kv` is the layer's cache for attention sub-layers and ignored otherwise.
void run_sublayer(const SubLayer& sublayer, ForwardPass& pass, const SubLayerWeights& w,
                  const KvView& kv);

} // namespace pshard
