#include "runtime/model/model.h"

#include "runtime/model/kv_ring.h"

#include <algorithm>

namespace pshard {

Result<std::unique_ptr<Model>> Model::load(const std::string& path, gguf::OpenMode data,
                                           const HParamOverrides& overrides,
                                           std::span<const LoraAdapter> loras) {
  if (data == gguf::OpenMode::kMetadataOnly)
    return invalid_argument("a model needs its weights: open it with kMapData or kReadData");
  PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path, data));
  auto model = from_file(std::move(file), overrides);
  if (!model.ok())
    return model.status().with_context(path);
  // In place: the bound weight views see the merged values.
  PSHARD_RETURN_IF_ERROR(apply_lora_adapters(*(*model)->file_, loras));
  return model;
}

Result<std::unique_ptr<Model>> Model::from_file(std::unique_ptr<gguf::GgufFile> file,
                                                const HParamOverrides& overrides) {
  auto model = std::unique_ptr<Model>(new Model());
  for (const auto& [key, value] : overrides.file_values)
    file->override_value(key, value);
  PSHARD_ASSIGN_OR_RETURN(model->hparams_, read_model_hparams(*file, &overrides));
  PSHARD_ASSIGN_OR_RETURN(model->weights_, bind_model_weights(*file, model->hparams_));
  model->sublayers_ = model_sublayers(model->hparams_);
  model->file_ = std::move(file);
  return model;
}

uint64_t Model::weight_bytes() const {
  uint64_t n = 0;
  for (const auto& t : file_->tensors())
    n += t.n_bytes;
  return n;
}

uint64_t Model::n_params() const {
  uint64_t n = 0;
  for (const auto& t : file_->tensors())
    n += static_cast<uint64_t>(t.n_values());
  return n;
}

CpuSession::CpuSession(const Model& model, KvCache kv, int32_t threads, int64_t n_batch)
    : model_(model), kv_(std::move(kv)), pool_(std::make_unique<ThreadPool>(threads)),
      cpu_(std::make_unique<CpuOps>(*pool_)), n_batch_(n_batch) {}

Result<std::unique_ptr<CpuSession>> CpuSession::create(const Model& model,
                                                           const SessionParams& params) {
  const ModelHParams& hp = model.hparams();
  int64_t n_ctx = params.n_ctx > 0 ? params.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  if (params.n_ctx < 0)
    return invalid_argument("context length must be positive, got " +
                            std::to_string(params.n_ctx));
  PSHARD_RETURN_IF_ERROR(check_context_fits(hp, n_ctx));
  if (params.n_batch <= 0)
    return invalid_argument("batch size must be positive");
  if (params.max_logit_rows < 1)
    return invalid_argument("max_logit_rows must be at least 1, got " +
                            std::to_string(params.max_logit_rows));
  if (params.n_threads < 0)
    return invalid_argument("thread count must be positive, got " +
                            std::to_string(params.n_threads));
  const int32_t threads = params.n_threads > 0 ? params.n_threads : ThreadPool::hardware_threads();
  PSHARD_RETURN_IF_ERROR(check_kv_types(params.kv_type_k, params.kv_type_v, hp.attn_key_dim(),
                                        hp.attn_value_dim()));
  // the most tokens a pass holds
  const int64_t n_batch = std::min(pass_tokens_for(hp, params.n_batch, n_ctx), n_ctx);
  // A model that attends both ways keeps no keys past a pass: its layers share one layer's.
  PSHARD_ASSIGN_OR_RETURN(
      KvCache kv,
      model_kv_cache(
          hp, n_ctx, params.kv_type_k, params.kv_type_v,
          params.swa_full ? 0 : kv_ring_positions(widest_attention_window(hp), n_batch, n_ctx),
          /*one_layer_for_all=*/!hp.causal));
  auto s = std::unique_ptr<CpuSession>(new CpuSession(model, std::move(kv), threads, n_batch));
  // decode_all runs in one pass, so its rows are at most a pass's tokens.
  s->max_logit_rows_ = std::min(params.max_logit_rows, s->n_batch_);
  s->act_.reserve(hp, s->n_batch_, s->max_logit_rows_);
  return s;
}

Status check_decode_extras(const ModelHParams& hp, std::span<const TokenId> tokens,
                           const DecodeExtras& extra, int64_t n_past, int64_t n_ctx) {
  PSHARD_RETURN_IF_ERROR(check_generates(hp));
  if (extra.embeddings) {
    const MatrixView& e = *extra.embeddings;
    if (e.type != TensorType::kF32 || e.cols != hp.n_embd)
      return invalid_argument("input embeddings must be F32 rows of the model's " +
                              std::to_string(hp.n_embd) + " values");
    PSHARD_RETURN_IF_ERROR(check_decode_input(tokens, e.rows, n_past, n_ctx));
  } else {
    PSHARD_RETURN_IF_ERROR(check_decode_input(tokens, hp.n_vocab, n_past, n_ctx));
  }
  if (!extra.rope_positions.empty() && extra.rope_positions.size() != 3 * tokens.size())
    return invalid_argument("M-RoPE positions must be 3 per token");
  if (extra.deepstack.layers > 0 && (!extra.embeddings || !extra.deepstack.data))
    return invalid_argument("DeepStack rows come with an image's embedding rows");
  if (hp.n_deepstack > 0 && extra.embeddings && extra.deepstack.layers != hp.n_deepstack)
    return invalid_argument("the image has " + std::to_string(extra.deepstack.layers) +
                            " DeepStack rows per token, but the language model takes " +
                            std::to_string(hp.n_deepstack) +
                            " ({arch}.n_deepstack_layers); give the projector that belongs to "
                            "this model");
  return Status::ok_status();
}

Result<std::span<const float>> CpuSession::decode(std::span<const TokenId> tokens) {
  return decode(tokens, DecodeExtras{});
}

Result<std::span<const float>> CpuSession::decode(std::span<const TokenId> tokens,
                                                  const DecodeExtras& extra) {
  const ModelHParams& hp = model_.hparams();
  PSHARD_RETURN_IF_ERROR(check_decode_extras(hp, tokens, extra, n_past_, kv_.n_ctx()));
  for (size_t begin = 0; begin < tokens.size(); begin += static_cast<size_t>(n_batch_)) {
    const size_t n = std::min<size_t>(n_batch_, tokens.size() - begin);
    DecodeExtras chunk = extra;
    if (!extra.rope_positions.empty())
      chunk.rope_positions = extra.rope_positions.subspan(3 * begin, 3 * n);
    forward_chunk(tokens.subspan(begin, n), chunk, /*compute_logits=*/begin + n == tokens.size());
  }
  return std::span<const float>(act_.ptrs().logits, static_cast<size_t>(hp.n_vocab));
}

Result<std::span<const float>> CpuSession::decode_all(std::span<const TokenId> tokens) {
  const ModelHParams& hp = model_.hparams();
  PSHARD_RETURN_IF_ERROR(check_generates(hp));
  PSHARD_RETURN_IF_ERROR(
      check_decode_all(tokens, hp.n_vocab, n_past_, kv_.n_ctx(), max_logit_rows_));
  const std::vector<int64_t> rows = every_row(tokens.size());
  forward_chunk(tokens, DecodeExtras{}, /*compute_logits=*/true, rows);
  return std::span<const float>(act_.ptrs().logits,
                                tokens.size() * static_cast<size_t>(hp.n_vocab));
}

void final_norm_rows(CpuOps& cpu, const Model& model, const float* hidden,
                     std::span<const int64_t> rows, std::vector<float>& out) {
  const ModelHParams& hp = model.hparams();
  out.resize(rows.size() * static_cast<size_t>(hp.n_embd));
  const float* norm = model.weights().output_norm.data; // null: an encoder's rows are final
  const float* norm_b = model.weights().output_norm_b.data;
  const auto d = static_cast<size_t>(hp.n_embd);
  for (size_t i = 0; i < rows.size(); ++i) {
    const float* row = hidden + static_cast<size_t>(rows[i]) * d;
    if (norm)
      pre_norm(cpu, hp, row, norm, norm_b, out.data() + i * d, 1);
    else
      std::copy_n(row, d, out.data() + i * d);
  }
}

Result<std::span<const float>> CpuSession::decode_embeddings(std::span<const TokenId> tokens) {
  const ModelHParams& hp = model_.hparams();
  PSHARD_RETURN_IF_ERROR(
      check_decode_embeddings(tokens, hp.n_vocab, n_past_, kv_.n_ctx(), max_embedding_rows()));
  PSHARD_RETURN_IF_ERROR(check_one_pass_text(hp, n_past_, max_embedding_rows()));
  forward_chunk(tokens, DecodeExtras{}, /*compute_logits=*/false);
  final_norm_rows(*cpu_, model_, act_.ptrs().hidden, every_row(tokens.size()), embeddings_);
  return std::span<const float>(embeddings_);
}

Status CpuSession::rewind(int64_t n_past) {
  PSHARD_RETURN_IF_ERROR(kv_.rewind(n_past, n_past_));
  n_past_ = n_past;
  return Status::ok_status();
}

void CpuSession::forward_chunk(std::span<const TokenId> tokens, const DecodeExtras& extra,
                               bool compute_logits, std::span<const int64_t> logit_rows) {
  ForwardPass pass{model_.hparams(), *cpu_, act_.ptrs(), n_past_, tokens};
  pass.logit_rows = logit_rows;
  pass.routing = routing_;
  pass.rope_positions = extra.rope_positions;
  pass.n_ctx = kv_.n_ctx();
  const ModelHParams& hp = model_.hparams();
  const std::vector<DeepstackRow> deepstack = deepstack_rows(extra.deepstack, tokens, hp.n_embd);
  const std::span<const SubLayer> subs = model_.sublayers();
  for (size_t i = 0; i < subs.size(); ++i) {
    const SubLayer& s = subs[i];
    if (s.kind == SubLayerKind::kHead && !compute_logits)
      continue;
    SubLayerWeights w = host_sublayer_weights(model_.weights(), s);
    if (s.kind == SubLayerKind::kEmbed && extra.embeddings)
      w.embed = *extra.embeddings; // the ids are rows of the given embeddings
    run_sublayer(s, pass, w, s.kind == SubLayerKind::kAttention ? kv_.layer(s.layer) : KvView{});
    if (deepstack_after(subs, i, deepstack, hp.n_deepstack))
      add_deepstack_rows(deepstack, s.layer, pass.act.hidden, hp.n_embd);
  }
  n_past_ += static_cast<int64_t>(tokens.size());
}

} // namespace pshard
