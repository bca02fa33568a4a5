// Which GGUF tensors each sub-layer owns, with their shapes, for a model's
// hyperparameters: the one description of the weights that the runtime binds
// (weights.cpp) and the planner prices (compiler/lib/Planner/ModelGraph.cpp). A family's
// optional parts (biases, q/k norms, shared expert, tied output) appear only when the
// hyperparameters say the file has them, so a tensor outside this list is an error.
//
//   for (const SubLayer& s : model_sublayers(hp))
//     for (const TensorSpec& t : sublayer_tensor_specs(hp, s))
//       std::cout << s.name << ": " << t.name << (t.is_matrix() ? " (matmul)" : "") << "\n";
#pragma once

#include "runtime/model/hparams.h"
#include "runtime/model/sublayer_list.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

// What a tensor is to the forward pass.
enum class WeightRole : uint8_t {
  // clang-format off
  kTokenEmbd,  // embed: rows gathered; also the head's matrix when the output is tied
  kOutputNorm, // head
  kOutput,     // head
  kOutputNormB, kOutputBias, // head: the norm's and the logits' biases (phimoe)
  kRopeFreqs,  // attention: llama3 frequency divisors (optional, shared by all layers)
  kRopeFactorsLong, kRopeFactorsShort, // attention: LongRoPE's divisors (shared)
  kAttnNorm, kWq, kWk, kWv, kWo,
  kAttnNormB, kFfnNormB, // biases added after the pre-norms (phimoe)
  kWqkv,                // attention: q, k and v rows in one matrix (Phi-3)
  kBq, kBk, kBv, kBo,   // attention biases
  kQNorm, kKNorm,       // per-head RMSNorm weights (head_dim)
  kAttnSinks,           // one sink logit per query head (gpt-oss)
  kAttnPostNorm,        // RMSNorm of the attention's output before the residual (Gemma)
  kFfnNorm, kFfnGate, kFfnUp, kFfnDown,
  kFfnGateUp,           // ffn: gate rows then up rows in one matrix (Phi-3)
  kFfnPostNorm,         // RMSNorm of the FFN's output before the residual (Gemma)
  kRouter,              // moe: n_expert x n_embd router logits
  kGateExps, kUpExps, kDownExps,          // moe: n_expert stacked matrices
  kRouterBias,          // moe: n_expert router biases (gpt-oss)
  kGateExpsBias, kUpExpsBias, kDownExpsBias, // moe: one bias row per expert (gpt-oss)
  kExpertSelectionBias, // moe: n_expert values added to choose the top k (GLM-4.5)
  kShexpGateInp,        // moe: the shared expert's sigmoid gate, one row of n_embd
  kShexpGate, kShexpUp, kShexpDown,       // moe: the shared expert
  // An encoder (BERT): what finishes its embedding, run at the start of attn[0] (the
  // embed sub-layer's device path streams only the pass's table rows):
  kPosEmbd,             // absolute positions' rows, gathered
  kTokenTypes,          // token types' rows (type 0's is added), gathered
  kEmbdNorm, kEmbdNormB, // LayerNorm of the summed embedding
  // and its post-norm blocks' LayerNorms and FFN biases.
  kAttnOutNorm, kAttnOutNormB, // LayerNorm of attention's residual sum
  kFfnUpBias, kFfnDownBias,
  kLayerOutNorm, kLayerOutNormB, // LayerNorm of the FFN's residual sum
  // Multi-head latent attention (DeepSeek): the queries' low-rank pair and its norm, the
  // latent's projection (plus the shared rotated part) and its norm, and the per-head
  // expansions of the latent into keys and values (n_head matrices each).
  kWqA, kQANorm, kWqB, kWkvA, kKvANorm, kWkB, kWvB,
  kWkvB, // the older files' expansions of the latent, every head's keys then values in one
  // Gated DeltaNet (a recurrent layer; runtime/kernels/delta_net.h): the mixed q/k/v stream,
  // the output gate z, b and a (one matrix grouped per k head, or Qwen3.5's two), the output
  // projection; the conv's taps, ssm_a, dt's bias and the output's per-head norm.
  kSsmQkv, kSsmGate, kSsmBa, kSsmBeta, kSsmAlpha, kSsmOut,
  kSsmIn, // the first conversions' q, k, v and z in one matrix, grouped per k head
  kSsmConv, kSsmA, kSsmDt, kSsmNorm,

  // clang-format on
};

struct TensorSpec {
  std::string name;          // "blk.3.attn_q.weight"
  std::vector<int64_t> dims; // GGUF order: dims[0] is the row (input) length
  WeightRole role;
  bool required = true;      // false: used when the file has it (rope_freqs)

  // Multiplied with activations (priced as a matmul); otherwise a vector (norm, bias).
  bool is_matrix() const;
  // A stack of n_expert matrices (dims[2] experts).
  bool is_experts() const;
};

// The tensors of sub-layer `s`, in a fixed order.
std::vector<TensorSpec> sublayer_tensor_specs(const ModelHParams& hp, const SubLayer& s);

// A tensor of a block past the ones the model runs (blk.N.* with N in [n_layer, n_layer +
// n_nextn): GLM-4.5's multi-token-prediction head), which binding and planning leave in
// the file.
bool is_unrun_block_tensor(const ModelHParams& hp, std::string_view name);

} // namespace pshard
