#include "runtime/batch/batched_hybrid_session.h"

#include <algorithm>

namespace pshard {

Result<std::unique_ptr<BatchedHybridSession>>
BatchedHybridSession::create(const Model& model, const Schedule* schedule,
                             std::unique_ptr<Device> device, const BatchParams& in,
                             const BatchedHybridOptions& options) {
  const ModelHParams& hp = model.hparams();
  PSHARD_RETURN_IF_ERROR(check_batch_params(in));
  // The context per sequence, as a HybridSession picks it: the model's, at most 4096 and
  // at most the schedule's.
  int64_t n_ctx = in.n_ctx > 0 ? in.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  const auto* compiled = schedule ? schedule->root().options() : nullptr;
  if (in.n_ctx == 0 && compiled)
    n_ctx = std::min<int64_t>(n_ctx, compiled->n_ctx());
  SequenceLimits limits{in.max_sequences, n_ctx, in.page_tokens, in.n_pages, in.prefix_cache};
  if (limits.n_pages == 0)
    limits.n_pages = in.max_sequences * ((n_ctx + in.page_tokens - 1) / in.page_tokens);
  HybridParams p;
  p.n_ctx = n_ctx;
  p.n_threads = in.n_threads;
  p.vram_budget =
      schedule && options.vram_budget == 0 ? schedule->budgets().back() : options.vram_budget;
  p.n_batch = in.max_batch_tokens;
  p.force_tier = options.force_tier;
  p.kv_type_k = options.kv_type_k;
  p.kv_type_v = options.kv_type_v;
  p.kv_pool_rows = limits.n_pages * in.page_tokens;
  p.kv_page_tokens = in.page_tokens;
  p.sequences = in.max_sequences;
  p.max_logit_rows = in.max_logit_rows > 0 ? in.max_logit_rows : in.max_sequences;
  auto e =
      std::unique_ptr<BatchedHybridSession>(new BatchedHybridSession(limits, std::move(device)));
  PSHARD_ASSIGN_OR_RETURN(e->session_, HybridSession::create(model, schedule, e->device_.get(), p));
  e->schedule_ = schedule;
  e->n_vocab_ = hp.n_vocab;
  e->n_embd_ = hp.n_embd;
  e->max_logit_rows_ = p.max_logit_rows;
  e->max_batch_tokens_ = std::min(in.max_batch_tokens, e->session_->max_tokens_per_pass());
  std::span<int32_t> tables = e->seqs_.tables();
  e->device_tables_ = tables.data();
  if (e->device_ && schedule) { // the device reads the page tables in place, over the bus
    PSHARD_ASSIGN_OR_RETURN(uint8_t * mapped,
                            e->device_->map_host_memory(tables.data(), tables.size_bytes()));
    e->device_tables_ = reinterpret_cast<const int32_t*>(mapped);
  }
  return e;
}

BatchedHybridSession::~BatchedHybridSession() {
  session_.reset(); // before the device it runs on
  if (device_ && device_tables_ != seqs_.tables().data())
    device_->unregister_host_memory(seqs_.tables().data());
}

Result<BatchLogits> BatchedHybridSession::decode(std::span<const BatchEntry> batch) {
  PSHARD_ASSIGN_OR_RETURN(AssembledPass p,
                          seqs_.assemble(batch, {n_vocab_, max_batch_tokens_, max_logit_rows_}));
  seqs_.take_pages(p);
  std::vector<SeqSegment> device_segments = p.segments;
  for (SeqSegment& g : device_segments)
    g.pages = device_tables_ + (g.pages - seqs_.tables().data());
  const BatchPassInput in{p.tokens,         p.segments,       device_segments,
                          p.logit_rows,     p.longest,        seqs_.rows_spanned(),
                          p.rope_positions, p.embedding_rows, p.hidden_rows};
  auto logits = session_->decode_batch(in);
  if (!logits.ok()) { // the pass ran nowhere: give its new pages back
    seqs_.release_unwritten(p);
    return logits.status();
  }
  seqs_.advance(p);
  BatchLogits out{*logits, n_vocab_, static_cast<int64_t>(p.logit_rows.size())};
  out.hidden = session_->embeddings().data();
  out.n_embd = n_embd_;
  out.hidden_rows = static_cast<int64_t>(p.hidden_rows.size());
  return out;
}

Status BatchedHybridSession::set_vram_budget(uint64_t bytes) {
  if (!schedule_)
    return BatchDecoder::set_vram_budget(bytes);
  return session_->set_budget(bytes);
}

BatchEngineStats BatchedHybridSession::stats() const {
  BatchEngineStats s;
  s.sessions = session_->stats();
  s.vram_budget = session_->budget();
  s.device_bytes = device_ ? device_->arena_bytes() : 0;
  return s;
}

} // namespace pshard
