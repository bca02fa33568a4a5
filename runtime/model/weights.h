// The tensors of a model, bound in place to the GGUF mapping, by the layout of
// tensor_layout.h (the same description the planner prices).
//
// Matrices are never copied: a MatrixView points into the mapped file. Only the 1-D
// vectors (norms, biases) of a non-F32 file are converted to floats (a few KB per layer).
//
//   PSHARD_ASSIGN_OR_RETURN(ModelWeights w, bind_model_weights(*file, hp));
//   const AttentionWeights& a = w.layers[0].attn;  // a.bq.data is null without biases
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/ops.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/kernels/matmul.h"
#include "runtime/model/hparams.h"

#include <memory>
#include <vector>

namespace pshard {

// A 1-D F32 vector from the file, in place when the file stores F32; null when the
// model has no such tensor.
struct VectorWeight {
  const float* data = nullptr;
  std::shared_ptr<std::vector<float>> converted; // backing store when the file is not F32
};

// A 3-D expert tensor: n_expert matrices of rows x cols, one after the other.
using ExpertWeights = ExpertMatrices;

struct AttentionWeights {
  VectorWeight norm, norm_b; // the pre-norm's weight, and its bias (phimoe) or null
  MatrixView wq, wk, wv, wo;
  VectorWeight bq, bk, bv, bo;   // biases (qwen2 family; optional for llama)
  VectorWeight q_norm, k_norm;   // per-head RMSNorm before RoPE (qwen3 family)
  VectorWeight sinks;            // one sink logit per query head (gpt-oss), or null
  VectorWeight post_norm;        // of the output before the residual (Gemma), or null
  // An encoder (BERT): no pre-norm (`norm` null); its residual sum LayerNormed
  // (out_norm, out_norm_b). attn[0] first finishes the embedding: adds the rows of the
  // positions (pos_embd) and of token type 0 (token_types, optional), LayerNorms the sum
  // (embd_norm, embd_norm_b). Null elsewhere.
  MatrixView pos_embd, token_types;
  VectorWeight embd_norm, embd_norm_b;
  VectorWeight out_norm, out_norm_b;
  // Multi-head latent attention (DeepSeek; runtime/model/mla_attention.cpp): queries by
  // wq, or by wq_a, its norm q_a_norm and wq_b; the latent and the shared rotated part by
  // wkv_a, the latent normed by kv_a_norm; each head's key and value expansions of the
  // latent (n_head matrices, head h's by wk_b.expert(h)). Null elsewhere.
  MatrixView wq_a, wq_b, wkv_a;
  MatrixView wkv_b; // the older files' form: every head's expansions in one matrix
  VectorWeight q_a_norm, kv_a_norm;
  ExpertMatrices wk_b, wv_b;
  // Gated DeltaNet (a recurrent layer; runtime/model/delta_net_attention.cpp): the mixed
  // q/k/v stream, the output gate z, b and a (ssm_ba grouped per k head; Qwen3.5: ssm_beta
  // and ssm_alpha), the output projection; the conv (conv_dim rows of conv_kernel taps),
  // ssm_a, dt's bias and the output's per-head norm. Null elsewhere.
  MatrixView ssm_qkv, ssm_gate, ssm_ba, ssm_beta, ssm_alpha, ssm_out;
  MatrixView ssm_in; // the first conversions' form: q, k, v and z grouped per k head
  VectorWeight ssm_conv, ssm_a, ssm_dt, ssm_norm;
};

struct FfnWeights {
  VectorWeight norm, norm_b;
  MatrixView gate, up, down;
  VectorWeight post_norm; // of the output before the residual (Gemma), or null
  // An encoder (BERT): no norm nor gate; up and down biases, GELU, and the residual sum
  // LayerNormed (out_norm, out_norm_b). Null elsewhere.
  VectorWeight up_bias, down_bias, out_norm, out_norm_b;
};

struct MoeWeights {
  VectorWeight norm, norm_b;
  MatrixView router;     // n_expert x n_embd
  ExpertWeights gate, up, down;
  // The shared expert every token runs (qwen2moe, glm4moe): a SwiGLU FFN (its norm unused:
  // it reads the block's normed input) whose output is scaled by sigmoid(shexp_gate_inp · x)
  // when the model has that gate (qwen2moe). Matrices null when the model has none.
  FfnWeights shexp;
  MatrixView shexp_gate_inp; // 1 x n_embd
  // glm4moe: n_expert values added to the router's probabilities to choose the top k.
  VectorWeight selection_bias;
  // gpt-oss: the router's bias (n_expert) and each expert's biases, expert e's row at
  // e * the matrix's output width; null when the model has none.
  VectorWeight router_bias, gate_bias, up_bias, down_bias;
  // Set by the executor for a pass it routed on the host (only the routed experts were
  // copied): the dispatch uses these routes (see MoeDispatch::routes).
  std::shared_ptr<const MoeRoutes> host_routes;
};

struct LayerWeights {
  AttentionWeights attn;
  FfnWeights ffn;        // dense models
  MoeWeights moe;        // MoE models
};

struct ModelWeights {
  MatrixView token_embd; // n_vocab rows of n_embd
  VectorWeight output_norm, output_norm_b;
  MatrixView output;     // token_embd when the output is tied
  VectorWeight output_b; // the logits' bias (phimoe), or null
  VectorWeight rope_freqs; // llama3 frequency factors, or null
  VectorWeight rope_long, rope_short; // LongRoPE's factors, or null
  std::vector<LayerWeights> layers;
  // A reranker's head (cls.output), used on the host after pooling; null for others.
  std::shared_ptr<const Classifier> classifier;
  // sentence-transformers' Dense modules after pooling (EmbeddingGemma), or null.
  std::shared_ptr<const EmbeddingProjection> projection;
};

// Checks every expected tensor's presence, shape and type against the
// hyperparameters, and refuses tensors the architecture does not have.
Result<ModelWeights> bind_model_weights(const gguf::GgufFile& file, const ModelHParams& hp);

} // namespace pshard
