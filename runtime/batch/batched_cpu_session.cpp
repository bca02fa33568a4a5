#include "runtime/batch/batched_cpu_session.h"

#include <algorithm>
#include <string>

namespace pshard {

BatchedCpuSession::BatchedCpuSession(const Model& model, const BatchParams& params,
                                     std::unique_ptr<KvPagePool> pool)
    : model_(model), params_(params), pool_(std::move(pool)),
      seqs_({params.max_sequences, params.n_ctx, params.page_tokens, params.n_pages,
             params.prefix_cache}),
      threads_(std::make_unique<ThreadPool>(params.n_threads)),
      cpu_(std::make_unique<CpuOps>(*threads_)) {}

Status check_batch_params(const BatchParams& p) {
  if (p.max_sequences <= 0 || p.max_batch_tokens <= 0 || p.page_tokens <= 0 || p.n_ctx < 0 ||
      p.n_pages < 0 || p.max_logit_rows < 0 || p.n_threads < 0)
    return invalid_argument("batch parameters must be positive (sequences " +
                            std::to_string(p.max_sequences) + ", tokens per pass " +
                            std::to_string(p.max_batch_tokens) + ", tokens per page " +
                            std::to_string(p.page_tokens) + ")");
  return Status::ok_status();
}

Result<std::unique_ptr<BatchedCpuSession>> BatchedCpuSession::create(const Model& model,
                                                                     const BatchParams& in) {
  const ModelHParams& hp = model.hparams();
  BatchParams p = in;
  PSHARD_RETURN_IF_ERROR(check_batch_params(p));
  if (p.n_ctx == 0)
    p.n_ctx = std::min<int64_t>(hp.n_ctx_train, 4096);
  if (p.max_logit_rows == 0)
    p.max_logit_rows = p.max_sequences;
  if (p.n_threads == 0)
    p.n_threads = ThreadPool::hardware_threads();
  if (p.n_pages == 0)
    p.n_pages = p.max_sequences * ((p.n_ctx + p.page_tokens - 1) / p.page_tokens);
  PSHARD_RETURN_IF_ERROR(check_kv_types(p.kv_type_k, p.kv_type_v, hp.head_dim));
  PSHARD_ASSIGN_OR_RETURN(auto pool, KvPagePool::create(hp.n_layer, hp.kv_dim(), p.page_tokens,
                                                        p.n_pages, p.kv_type_k, p.kv_type_v));
  auto s = std::unique_ptr<BatchedCpuSession>(new BatchedCpuSession(model, p, std::move(pool)));
  s->act_.reserve(hp, p.max_batch_tokens, p.max_logit_rows);
  return s;
}

Result<BatchLogits> BatchedCpuSession::decode(std::span<const BatchEntry> batch) {
  const ModelHParams& hp = model_.hparams();
  PSHARD_ASSIGN_OR_RETURN(
      AssembledPass p,
      seqs_.assemble(batch, {hp.n_vocab, params_.max_batch_tokens, params_.max_logit_rows}));
  seqs_.take_pages(p);
  ForwardPass pass{hp, *cpu_, act_.ptrs(), 0, p.tokens, p.segments, p.logit_rows};
  pass.rope_positions = p.rope_positions;
  pass.n_ctx = params_.n_ctx;
  const bool logits = !p.logit_rows.empty();
  for (const SubLayer& s : model_.sublayers()) {
    if (s.kind == SubLayerKind::kHead && !logits)
      continue;
    run_sublayer(s, pass, host_sublayer_weights(model_.weights(), s),
                 s.kind == SubLayerKind::kAttention ? pool_->layer(s.layer) : KvView{});
    if (s.kind == SubLayerKind::kEmbed) // image tokens: their rows replace the placeholders'
      for (const auto& [row, values] : p.embedding_rows)
        std::copy_n(values, hp.n_embd, act_.ptrs().hidden + row * hp.n_embd);
  }
  seqs_.advance(p);
  final_norm_rows(*cpu_, model_, act_.ptrs().hidden, p.hidden_rows, embeddings_);
  BatchLogits out{act_.ptrs().logits, hp.n_vocab, static_cast<int64_t>(p.logit_rows.size())};
  out.hidden = embeddings_.data();
  out.n_embd = hp.n_embd;
  out.hidden_rows = static_cast<int64_t>(p.hidden_rows.size());
  return out;
}

} // namespace pshard
