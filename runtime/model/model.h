// A model of any supported architecture family loaded from GGUF: its hyperparameters,
// its weights bound in place to the file mapping, and its sub-layer sequence.
//
//   PSHARD_ASSIGN_OR_RETURN(auto model, Model::load("stories260K.gguf"));
//   PSHARD_ASSIGN_OR_RETURN(auto session, CpuSession::create(*model, {}));
//   PSHARD_ASSIGN_OR_RETURN(std::span<const float> logits, session->decode(prompt_ids));
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/model/decoder.h"
#include "runtime/model/deepstack.h"
#include "runtime/model/hparams.h"
#include "runtime/model/lora_adapter.h"
#include "runtime/model/kv_types.h"
#include "runtime/model/sublayer.h"
#include "runtime/model/weights.h"

#include <memory>
#include <string>
#include <vector>

namespace pshard {

class Model {
public:
  // `data`: kMapData uses the weights in place from a read-only mapping (the default,
  // llama.cpp's mmap); kReadData copies them into huge-page memory (--no-mmap).
  // `overrides`: metadata that stands in for the file's (hparam_overrides.h: RoPE flags).
  // `loras`: adapters merged into the weights (lora_adapter.h).
  static Result<std::unique_ptr<Model>> load(const std::string& path,
                                             gguf::OpenMode data = gguf::OpenMode::kMapData,
                                             const HParamOverrides& overrides = {},
                                             std::span<const LoraAdapter> loras = {});
  // For a file already opened with its data mapped.
  static Result<std::unique_ptr<Model>> from_file(std::unique_ptr<gguf::GgufFile> file,
                                                  const HParamOverrides& overrides = {});

  const gguf::GgufFile& file() const { return *file_; }
  const ModelHParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const std::vector<SubLayer>& sublayers() const { return sublayers_; }
  // Bytes of all tensors, as stored in the file.
  uint64_t weight_bytes() const;
  uint64_t n_params() const;

private:
  std::unique_ptr<gguf::GgufFile> file_;
  ModelHParams hparams_;
  ModelWeights weights_;
  std::vector<SubLayer> sublayers_;
};

struct SessionParams {
  int64_t n_ctx = 0;     // 0: the model's training context, capped at 4096
  int32_t n_threads = 0; // 0: all hardware threads
  int64_t n_batch = 256; // most tokens per forward pass; longer inputs run in chunks
  TensorType kv_type_k = kDefaultKvType; // KV cache element types (kv_types.h)
  TensorType kv_type_v = kDefaultKvType;
  int64_t max_logit_rows = 1; // most tokens decode_all returns logits for (speculation)
  bool swa_full = false;      // whole caches for sliding-window layers, not rings (kv_ring.h)
};

class RoutingRecorder;

// What one decode call feeds the model besides token ids (vision-language models): rows
// of an embedding table in place of token_embd (the ids are then row indices into it,
// as for an image's embeddings), and M-RoPE positions, 3 per token (t, h, w), and an
// image's DeepStack rows (indexed by the same ids; runtime/model/deepstack.h).
struct DecodeExtras {
  const MatrixView* embeddings = nullptr; // host memory, F32, n_embd columns; or null
  std::span<const int32_t> rope_positions = {};
  DeepstackTable deepstack = {}; // only with embeddings
};

// check_decode_input for a call with extras: embedding rows are F32 of n_embd values
// and the ids index them; positions come 3 per token.
Status check_decode_extras(const ModelHParams& hp, std::span<const TokenId> tokens,
                           const DecodeExtras& extra, int64_t n_past, int64_t n_ctx);

// A decoder that also takes DecodeExtras (an image's rows, M-RoPE positions): the CPU
// session, and the hybrid session under a schedule (runtime/executor/hybrid_session.h).
class MultimodalDecoder : public Decoder {
public:
  using Decoder::decode;
  virtual Result<std::span<const float>> decode(std::span<const TokenId> tokens,
                                                const DecodeExtras& extra) = 0;
};

// Embedding rows (Decoder::decode_embeddings, BatchEntry::hidden): the output norm of
// rows `rows` of the hidden states `hidden` (host memory, n_embd floats each), one after
// another in `out`. Row by row, so a row's result does not depend on what else is asked.
void final_norm_rows(CpuOps& cpu, const Model& model, const float* hidden,
                     std::span<const int64_t> rows, std::vector<float>& out);

// One sequence being generated: KV cache, scratch activations and a thread pool.
class CpuSession final : public MultimodalDecoder {
public:
  static Result<std::unique_ptr<CpuSession>> create(const Model& model,
                                                      const SessionParams& params);

  // Appends tokens at the current position and returns the logits of the last one.
  // Fails (leaving the session unchanged) when a token id is out of range or the
  // context would overflow.
  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override;
  // decode() with embedding rows and/or rotary positions (runtime/vision/image_prompt.h).
  Result<std::span<const float>> decode(std::span<const TokenId> tokens,
                                        const DecodeExtras& extra) override;

  // Every token's logits (speculative decoding), and dropping positions (decoder.h).
  Result<std::span<const float>> decode_all(std::span<const TokenId> tokens) override;
  int64_t max_logit_rows() const override { return max_logit_rows_; }
  bool rewinds_anywhere() const override { return !model_.hparams().has_recurrent_layers(); }
  Status rewind(int64_t n_past) override;
  // Final hidden states after the output norm (decoder.h), n_batch tokens a call.
  int64_t max_embedding_rows() const override { return n_batch_; }
  Result<std::span<const float>> decode_embeddings(std::span<const TokenId> tokens) override;

  int64_t n_past() const override { return n_past_; }
  int64_t n_ctx() const override { return kv_.n_ctx(); }
  int32_t n_threads() const { return pool_->size(); }
  void reset() {
    n_past_ = 0;
    kv_.restart();
  }
  // Every later pass records its MoE routing there (null: none); must outlive the passes.
  void set_routing_recorder(RoutingRecorder* recorder) { routing_ = recorder; }
  // Host memory this session allocated: KV cache plus activations.
  size_t allocated_bytes() const { return kv_.bytes() + act_.bytes(); }

private:
  CpuSession(const Model& model, KvCache kv, int32_t threads, int64_t n_batch);
  // Only the last chunk of a prompt needs the head (its logits are the ones returned);
  // `logit_rows` non-empty: those tokens' logits instead of the last one's.
  void forward_chunk(std::span<const TokenId> tokens, const DecodeExtras& extra,
                     bool compute_logits, std::span<const int64_t> logit_rows = {});

  const Model& model_;
  KvCache kv_;
  Activations act_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<CpuOps> cpu_;
  int64_t n_batch_;
  int64_t max_logit_rows_ = 1;
  std::vector<float> embeddings_; // decode_embeddings' rows
  int64_t n_past_ = 0;
  RoutingRecorder* routing_ = nullptr;
};

} // namespace pshard
