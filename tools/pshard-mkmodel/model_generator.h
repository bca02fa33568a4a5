// Synthetic llama-family GGUF models of any shape, for tests and benchmarks:
// deterministic random weights from a seed, any weight type (with per-class
// overrides), a tokenizer copied from another GGUF or a small generated one, and
// a sparse mode that writes headers only (a 235B shape without 77 GB of disk).
//
//   ModelSpec spec;
//   spec.n_embd = 2048; spec.n_layer = 16; spec.n_head = 32; spec.n_head_kv = 8;
//   spec.n_ff = 8192; spec.type = TensorType::kQ4_0;
//   PSHARD_RETURN_IF_ERROR(write_llama_model(spec, "llama-1b-q4_0.gguf"));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"
#include "tools/pshard-mkmodel/quant_mix.h"

#include <cstdint>
#include <map>
#include <string>

namespace pshard {

struct ModelSpec {
  std::string name = "pshard-mkmodel";
  int64_t n_embd = 64;
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_head_kv = 0;   // 0: same as n_head
  int64_t n_ff = 172;
  int64_t n_expert = 0;    // 0: dense
  int64_t n_expert_used = 0;
  int64_t n_vocab = 0;     // 0: the copied tokenizer's size, or 512 for the generated one
  int64_t n_ctx = 2048;
  float rope_freq_base = 10000.0f;
  bool tied_output = false; // no output.weight: the head reuses token_embd
  uint64_t seed = 42;
  TensorType type = TensorType::kF32;
  QuantMix mix = QuantMix::kNone; // a llama-quantize recipe per tensor (quant_mix.h)
  // Per tensor class ("token_embd", "output", "attn_q", "attn_k", "attn_v",
  // "attn_output", "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_inp"); expert
  // tensors follow their ffn_* class. Norms are always F32.
  std::map<std::string, TensorType> overrides;
  std::string tokenizer_from; // a GGUF whose tokenizer.* metadata is copied
  bool sparse = false;
};

// Parses "ffn_down=f32,token_embd=q8_0" into spec.overrides.
Status parse_type_overrides(const std::string& text, ModelSpec* spec);

Status write_llama_model(const ModelSpec& spec, const std::string& path);

} // namespace pshard
