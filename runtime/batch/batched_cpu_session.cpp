#include "runtime/batch/batched_cpu_session.h"

#include "runtime/model/kv_cache.h"

#include <algorithm>
#include <string>

namespace pshard {

BatchedCpuSession::BatchedCpuSession(const Model& model, const BatchParams& params,
                                     const SequenceLimits& limits, std::unique_ptr<KvPagePool> pool)
    : model_(model), params_(params), pool_(std::move(pool)), seqs_(limits),
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

SequenceLimits sequence_limits(const ModelHParams& hp, const BatchParams& p, int64_t n_ctx) {
  // A model that attends both ways shares no start: a position's keys depend on the
  // tokens after it too. Nor one with recurrent layers: a state holds no earlier positions.
  SequenceLimits l{p.max_sequences, n_ctx, p.page_tokens, p.n_pages,
                   p.prefix_cache && hp.causal && !hp.has_recurrent_layers()};
  l.states = hp.has_recurrent_layers();
  if (l.n_pages == 0)
    l.n_pages = p.max_sequences * ((n_ctx + p.page_tokens - 1) / p.page_tokens);
  const int64_t window = p.swa_full ? 0 : widest_attention_window(hp);
  if (window == 0)
    return l;
  const int64_t pages =
      window_pool_pages(window, p.page_tokens, p.max_batch_tokens, p.max_sequences, l.n_pages);
  if (pages < l.n_pages) {
    l.window = window;
    l.window_pages = pages;
    l.max_pass_tokens = p.max_batch_tokens;
  }
  return l;
}

std::vector<int64_t> pool_layer_pages(const ModelHParams& hp, const SequenceLimits& l,
                                      std::span<const int64_t> state_rows) {
  std::vector<int64_t> pages;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const int64_t state = state_rows.empty() ? 0 : state_rows[static_cast<size_t>(il)];
    if (state > 0) // every sequence slot's state, one after another
      pages.push_back((l.max_sequences * state + l.page_tokens - 1) / l.page_tokens);
    else
      pages.push_back(l.window > 0 && hp.attention_window(il) > 0 ? l.window_pages : l.n_pages);
  }
  return pages;
}

Result<std::unique_ptr<BatchedCpuSession>> BatchedCpuSession::create(const Model& model,
                                                                     const BatchParams& in) {
  const ModelHParams& hp = model.hparams();
  BatchParams p = in;
  PSHARD_RETURN_IF_ERROR(check_batch_params(p));
  if (p.n_ctx == 0)
    p.n_ctx = std::min<int64_t>(hp.n_ctx_train, 4096);
  PSHARD_RETURN_IF_ERROR(check_context_fits(hp, p.n_ctx));
  p.max_batch_tokens = pass_tokens_for(hp, p.max_batch_tokens, p.n_ctx);
  if (p.max_logit_rows == 0)
    p.max_logit_rows = p.max_sequences;
  if (p.n_threads == 0)
    p.n_threads = ThreadPool::hardware_threads();
  const SequenceLimits limits = sequence_limits(hp, p, p.n_ctx);
  p.n_pages = limits.n_pages;
  PSHARD_RETURN_IF_ERROR(
      check_kv_types(p.kv_type_k, p.kv_type_v, hp.attn_key_dim(), hp.attn_value_dim()));
  const std::vector<int64_t> state_rows = model_state_rows(hp, p.kv_type_k, p.kv_type_v);
  std::vector<int64_t> layer_pages = pool_layer_pages(hp, limits, state_rows);
  if (!hp.causal) // keys live for one pass, and the layers run in turn: one layer's pages
    layer_pages = {*std::max_element(layer_pages.begin(), layer_pages.end())};
  PSHARD_ASSIGN_OR_RETURN(auto pool,
                          KvPagePool::create(layer_pages, hp.kv_dim(), p.page_tokens, p.kv_type_k,
                                             p.kv_type_v, hp.v_dim(), state_rows));
  auto s =
      std::unique_ptr<BatchedCpuSession>(new BatchedCpuSession(model, p, limits, std::move(pool)));
  s->act_.reserve(hp, p.max_batch_tokens, p.max_logit_rows);
  return s;
}

Result<BatchLogits> BatchedCpuSession::decode(std::span<const BatchEntry> batch) {
  const ModelHParams& hp = model_.hparams();
  PSHARD_ASSIGN_OR_RETURN(AssembledPass p,
                          seqs_.assemble(batch, {hp.n_vocab, params_.max_batch_tokens,
                                                 params_.max_logit_rows, hp.causal}));
  seqs_.take_pages(p);
  ForwardPass pass{hp, *cpu_, act_.ptrs(), 0, p.tokens, p.segments, p.logit_rows};
  pass.rope_positions = p.rope_positions;
  pass.window_segments = p.window_segments;
  pass.n_ctx = params_.n_ctx;
  const bool logits = !p.logit_rows.empty();
  const std::span<const SubLayer> subs = model_.sublayers();
  for (size_t i = 0; i < subs.size(); ++i) {
    const SubLayer& s = subs[i];
    if (s.kind == SubLayerKind::kHead && !logits)
      continue;
    run_sublayer(s, pass, host_sublayer_weights(model_.weights(), s),
                 s.kind == SubLayerKind::kAttention ? pool_->layer(s.layer) : KvView{});
    if (s.kind == SubLayerKind::kEmbed) // image tokens: their rows replace the placeholders'
      for (const auto& [row, values] : p.embedding_rows)
        std::copy_n(values, hp.n_embd, act_.ptrs().hidden + row * hp.n_embd);
    if (deepstack_after(subs, i, p.deepstack, hp.n_deepstack))
      add_deepstack_rows(p.deepstack, s.layer, act_.ptrs().hidden, hp.n_embd);
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
