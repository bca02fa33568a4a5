#include "runtime/batch/batched_cpu_session.h"

#include <algorithm>
#include <string>

namespace pshard {

BatchedCpuSession::BatchedCpuSession(const Model& model, const BatchParams& params,
                                     std::unique_ptr<KvPagePool> pool)
    : model_(model), params_(params), pool_(std::move(pool)),
      threads_(std::make_unique<ThreadPool>(params.n_threads)),
      cpu_(std::make_unique<CpuOps>(*threads_)) {}

Result<std::unique_ptr<BatchedCpuSession>> BatchedCpuSession::create(const Model& model,
                                                                     const BatchParams& in) {
  const ModelHParams& hp = model.hparams();
  BatchParams p = in;
  if (p.max_sequences <= 0 || p.max_batch_tokens <= 0 || p.page_tokens <= 0 || p.n_ctx < 0 ||
      p.n_pages < 0 || p.max_logit_rows < 0 || p.n_threads < 0)
    return invalid_argument("batch parameters must be positive (sequences " +
                            std::to_string(p.max_sequences) + ", tokens per pass " +
                            std::to_string(p.max_batch_tokens) + ", tokens per page " +
                            std::to_string(p.page_tokens) + ")");
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

Result<SeqId> BatchedCpuSession::open_sequence() {
  auto free_slot = std::find(seqs_.begin(), seqs_.end(), std::nullopt);
  if (free_slot == seqs_.end()) {
    if (static_cast<int64_t>(seqs_.size()) >= params_.max_sequences)
      return Status(StatusCode::kOutOfMemory,
                    "all " + std::to_string(params_.max_sequences) +
                        " sequences are in use; close one or allow more (-np)");
    seqs_.emplace_back();
    free_slot = seqs_.end() - 1;
  }
  *free_slot = Sequence{};
  return static_cast<SeqId>(free_slot - seqs_.begin());
}

void BatchedCpuSession::close_sequence(SeqId seq) {
  if (!find(seq))
    return;
  for (int32_t page : seqs_[static_cast<size_t>(seq)]->pages)
    pool_->give_back(page);
  seqs_[static_cast<size_t>(seq)].reset();
}

const BatchedCpuSession::Sequence* BatchedCpuSession::find(SeqId seq) const {
  if (seq < 0 || static_cast<size_t>(seq) >= seqs_.size() || !seqs_[static_cast<size_t>(seq)])
    return nullptr;
  return &*seqs_[static_cast<size_t>(seq)];
}

int64_t BatchedCpuSession::sequence_length(SeqId seq) const {
  const Sequence* s = find(seq);
  return s ? s->length : -1;
}

int64_t BatchedCpuSession::pages_for(int64_t positions) const {
  return (positions + params_.page_tokens - 1) / params_.page_tokens;
}

bool BatchedCpuSession::can_append(SeqId seq, int64_t n) const {
  const Sequence* s = find(seq);
  if (!s || s->length + n > params_.n_ctx)
    return false;
  return pages_for(s->length + n) - static_cast<int64_t>(s->pages.size()) <= pool_->free_pages();
}

KvPageStats BatchedCpuSession::kv_pages() const {
  return {params_.page_tokens, pool_->total_pages(), pool_->total_pages() - pool_->free_pages()};
}

Result<BatchedCpuSession::Plan> BatchedCpuSession::plan(std::span<const BatchEntry> batch) const {
  const int64_t n_vocab = model_.hparams().n_vocab;
  if (batch.empty())
    return invalid_argument("a pass needs at least one token");
  if (static_cast<int64_t>(batch.size()) > params_.max_batch_tokens)
    return invalid_argument("a pass of " + std::to_string(batch.size()) + " tokens exceeds the " +
                            std::to_string(params_.max_batch_tokens) + " a pass may carry");
  std::vector<int64_t> count(seqs_.size(), 0);
  Plan p;
  int64_t rows = 0;
  for (const BatchEntry& e : batch) {
    if (!find(e.seq))
      return invalid_argument("sequence " + std::to_string(e.seq) + " is not open");
    if (e.token < 0 || e.token >= n_vocab)
      return Status(StatusCode::kOutOfRange, "token id " + std::to_string(e.token) +
                                                 " is outside the vocabulary of " +
                                                 std::to_string(n_vocab));
    if (count[static_cast<size_t>(e.seq)]++ == 0)
      p.segment_seq.push_back(e.seq);
    rows += e.logits;
  }
  if (rows > params_.max_logit_rows)
    return invalid_argument("a pass asks for " + std::to_string(rows) + " logits rows, more than " +
                            std::to_string(params_.max_logit_rows));
  // Segments in order of first appearance; each sequence's tokens keep their batch order.
  std::vector<int64_t> next(seqs_.size(), 0);
  int64_t at = 0;
  for (SeqId s : p.segment_seq) {
    const Sequence& q = *find(s);
    const int64_t n = count[static_cast<size_t>(s)];
    if (q.length + n > params_.n_ctx)
      return Status(StatusCode::kOutOfRange, "sequence " + std::to_string(s) + " would exceed its " +
                                                 "context of " + std::to_string(params_.n_ctx) +
                                                 " tokens");
    p.new_pages += std::max<int64_t>(0, pages_for(q.length + n) - static_cast<int64_t>(q.pages.size()));
    p.segments.push_back({at, n, q.length, nullptr});
    next[static_cast<size_t>(s)] = at;
    at += n;
  }
  if (p.new_pages > pool_->free_pages())
    return Status(StatusCode::kOutOfMemory,
                  "the pass needs " + std::to_string(p.new_pages) + " more KV pages, " +
                      std::to_string(pool_->free_pages()) + " are free; finish or close sequences");
  p.tokens.resize(batch.size());
  for (const BatchEntry& e : batch) {
    const int64_t i = next[static_cast<size_t>(e.seq)]++;
    p.tokens[static_cast<size_t>(i)] = e.token;
    if (e.logits)
      p.logit_rows.push_back(i);
  }
  return p;
}

Result<BatchLogits> BatchedCpuSession::decode(std::span<const BatchEntry> batch) {
  PSHARD_ASSIGN_OR_RETURN(Plan p, plan(batch));
  for (size_t g = 0; g < p.segments.size(); ++g) { // cannot fail: plan() counted the pages
    Sequence& q = *seqs_[static_cast<size_t>(p.segment_seq[g])];
    while (static_cast<int64_t>(q.pages.size()) < pages_for(q.length + p.segments[g].count))
      q.pages.push_back(pool_->take().value());
    p.segments[g].pages = q.pages.data();
  }
  const ModelHParams& hp = model_.hparams();
  ForwardPass pass{hp, *cpu_, act_.ptrs(), 0, p.tokens, p.segments, p.logit_rows};
  const bool logits = !p.logit_rows.empty();
  for (const SubLayer& s : model_.sublayers())
    if (s.kind != SubLayerKind::kHead || logits)
      run_sublayer(s, pass, host_sublayer_weights(model_.weights(), s),
                   s.kind == SubLayerKind::kAttention ? pool_->layer(s.layer) : KvView{});
  for (size_t g = 0; g < p.segments.size(); ++g)
    seqs_[static_cast<size_t>(p.segment_seq[g])]->length += p.segments[g].count;
  return BatchLogits{act_.ptrs().logits, hp.n_vocab, static_cast<int64_t>(p.logit_rows.size())};
}

} // namespace pshard
