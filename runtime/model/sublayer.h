// The forward pass as the sequence of sub-layers the planner schedules:
// embed, then per layer attn[i] and ffn[i] (or moe[i]), then head. Each runs on
// the activations of one batch of new tokens.
#pragma once

#include "runtime/core/thread_pool.h"
#include "runtime/model/kv_cache.h"
#include "runtime/model/llama_hparams.h"
#include "runtime/model/llama_weights.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {



enum class SubLayerKind { kEmbed, kAttention, kFfn, kMoe, kHead };

struct SubLayer {
  SubLayerKind kind;
  int64_t layer; // -1 for embed and head
  std::string name; // "embed", "attn[3]", "ffn[3]", "moe[3]", "head"
};

// The sub-layers of a model in execution order.
std::vector<SubLayer> llama_sublayers(const LlamaHParams& hp);

// Scratch buffers of one forward pass, sized for up to max_tokens new tokens.
struct Activations {
  void reserve(const LlamaHParams& hp, int64_t max_tokens);
  size_t bytes() const;

  int64_t max_tokens = 0;
  std::vector<float> hidden, normed, q, k, v, attn_out, proj, gate, up, logits;
  // MoE only: router logits, rows gathered for one expert, and the weighted sum.
  std::vector<float> router, expert_in, expert_out, moe_out;
};

// What a sub-layer reads and writes during one pass over tokens [pos0, pos0 + n_tokens).
struct ForwardPass {
  const LlamaHParams& hp;
  const LlamaWeights& weights;
  KvCache& kv;
  Activations& act;
  ThreadPool& pool;
  int64_t pos0 = 0;
  std::span<const TokenId> tokens;
  int64_t n_tokens() const { return static_cast<int64_t>(tokens.size()); }
};

void embed_forward(ForwardPass& pass);
void attention_forward(ForwardPass& pass, int64_t layer);
void ffn_forward(ForwardPass& pass, int64_t layer);
void moe_forward(ForwardPass& pass, int64_t layer);
// Logits of the last token of the batch into act.logits.
void head_forward(ForwardPass& pass);

void run_sublayer(const SubLayer& sublayer, ForwardPass& pass);

} // namespace pshard
