// The tensors of a llama-family model, bound in place to the GGUF mapping.
//
// Matrices are never copied: a MatrixView points into the mapped file. Only the
// 1-D norm vectors of a non-F32 file are converted to floats (a few KB per layer).
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/ops.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/kernels/matmul.h"
#include "runtime/model/llama_hparams.h"

#include <memory>
#include <vector>

namespace pshard {

// A 1-D F32 vector from the file, in place when the file stores F32.
struct VectorWeight {
  const float* data = nullptr;
  std::shared_ptr<std::vector<float>> converted; // backing store when the file is not F32
};

// A 3-D expert tensor: n_expert matrices of rows x cols, one after the other.
using ExpertWeights = ExpertMatrices;

struct AttentionWeights {
  VectorWeight norm;
  MatrixView wq, wk, wv, wo;
};

struct FfnWeights {
  VectorWeight norm;
  MatrixView gate, up, down;
};

struct MoeWeights {
  VectorWeight norm;
  MatrixView router;     // n_expert x n_embd
  ExpertWeights gate, up, down;
  // Set by the executor for a pass it routed on the host (only the routed experts were
  // copied): the dispatch uses these routes (see MoeDispatch::routes).
  std::shared_ptr<const MoeRoutes> host_routes;
};

struct LayerWeights {
  AttentionWeights attn;
  FfnWeights ffn;        // dense models
  MoeWeights moe;        // MoE models
};

struct LlamaWeights {
  MatrixView token_embd; // n_vocab rows of n_embd
  VectorWeight output_norm;
  MatrixView output;     // token_embd when the output is tied
  bool tied_output = false;
  VectorWeight rope_freqs; // llama3 frequency factors, or null
  std::vector<LayerWeights> layers;
};

// Checks every expected tensor's presence, shape and type against the
// hyperparameters, and refuses tensors the llama architecture does not have.
Result<LlamaWeights> bind_llama_weights(const gguf::GgufFile& file, const LlamaHParams& hp);

} // namespace pshard
