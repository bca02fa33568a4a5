// Hyperparameters of a GGUF "llama"-architecture model (Llama 2/3, Mistral,
// Mixtral-style MoE), read from metadata only.
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"

#include <cstdint>
#include <string>

namespace pshard {

struct LlamaHParams {
  std::string name;         // general.name, for messages
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_ff = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t rope_dim = 0;     // leading values of each head that RoPE rotates
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f; // 1 / linear scaling factor
  int64_t n_expert = 0;     // 0 for a dense model
  int64_t n_expert_used = 0;

  bool is_moe() const { return n_expert > 0; }
  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
};

// Fails with a message naming the key for anything missing, inconsistent or
// unsupported (another architecture, an unknown RoPE scaling type, ...).
Result<LlamaHParams> read_llama_hparams(const gguf::GgufFile& file);

} // namespace pshard
