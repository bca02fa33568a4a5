#include "runtime/batch/batched_hybrid_session.h"

#include "runtime/model/kv_cache.h"
#include "runtime/model/kv_ring.h"

#include <algorithm>
#include <cstdint>

namespace pshard {

namespace {

// The sequences' limits (batched_cpu_session.h's), the sliding-window layers' pool the
// schedule's when it has one (compiled with --parallel: its kv_ring_positions rows, which
// sized the device caches) that holds what this engine's sequences and passes need.
SequenceLimits schedule_limits(const ModelHParams& hp, const Schedule* schedule,
                               const BatchParams& in, int64_t n_ctx) {
  BatchParams p = in;
  if (schedule)
    p.max_batch_tokens = std::min(p.max_batch_tokens, schedule->tiers().back());
  SequenceLimits l = sequence_limits(hp, p, n_ctx);
  const int64_t window = widest_attention_window(hp);
  const int64_t rows = schedule ? schedule->kv_ring_positions() : 0;
  const int64_t need =
      window_pool_pages(window, p.page_tokens, p.max_batch_tokens, p.max_sequences, INT64_MAX);
  if (in.swa_full || window == 0 || rows == 0 || rows % p.page_tokens != 0 ||
      rows / p.page_tokens < need)
    return l; // HybridSession::check_batch_capacity refuses a mismatch it cannot serve
  l.window = window;
  l.window_pages = rows / p.page_tokens;
  l.max_pass_tokens = p.max_batch_tokens;
  return l;
}

} // namespace

Result<std::unique_ptr<BatchedHybridSession>>
BatchedHybridSession::create(const Model& model, const Schedule* schedule,
                             std::unique_ptr<Device> device, const BatchParams& given,
                             const BatchedHybridOptions& options) {
  const ModelHParams& hp = model.hparams();
  PSHARD_RETURN_IF_ERROR(check_batch_params(given));
  // The context per sequence, as a HybridSession picks it: the model's, at most 4096 and
  // at most the schedule's.
  int64_t n_ctx = given.n_ctx > 0 ? given.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  const auto* compiled = schedule ? schedule->root().options() : nullptr;
  if (given.n_ctx == 0 && compiled)
    n_ctx = std::min<int64_t>(n_ctx, compiled->n_ctx());
  BatchParams in = given;
  in.max_batch_tokens = pass_tokens_for(hp, in.max_batch_tokens, n_ctx);
  const SequenceLimits limits = schedule_limits(hp, schedule, in, n_ctx);
  HybridParams p;
  p.n_ctx = n_ctx;
  p.n_threads = in.n_threads;
  p.vram_budget =
      schedule && options.vram_budget == 0 ? schedule->budgets().back() : options.vram_budget;
  p.n_batch = in.max_batch_tokens;
  p.force_tier = options.force_tier;
  p.swa_full = in.swa_full;
  p.kv_type_k = options.kv_type_k;
  p.kv_type_v = options.kv_type_v;
  p.kv_pool_rows = limits.n_pages * in.page_tokens;
  p.kv_page_tokens = in.page_tokens;
  p.kv_window_pool_rows = limits.window_pages * in.page_tokens;
  p.sequences = in.max_sequences;
  p.max_logit_rows = in.max_logit_rows > 0 ? in.max_logit_rows : in.max_sequences;
  auto e =
      std::unique_ptr<BatchedHybridSession>(new BatchedHybridSession(limits, std::move(device)));
  PSHARD_ASSIGN_OR_RETURN(e->session_, HybridSession::create(model, schedule, e->device_.get(), p));
  e->schedule_ = schedule;
  e->n_vocab_ = hp.n_vocab;
  e->n_embd_ = hp.n_embd;
  e->causal_ = hp.causal;
  e->max_logit_rows_ = p.max_logit_rows;
  e->max_batch_tokens_ = std::min(in.max_batch_tokens, e->session_->max_tokens_per_pass());
  PSHARD_ASSIGN_OR_RETURN(e->device_tables_, e->device_view(e->seqs_.tables()));
  PSHARD_ASSIGN_OR_RETURN(e->device_window_tables_, e->device_view(e->seqs_.window_tables()));
  return e;
}

Result<const int32_t*> BatchedHybridSession::device_view(std::span<int32_t> tables) {
  if (!device_ || !schedule_ || tables.empty())
    return tables.data();
  // The device reads the page tables in place, over the bus.
  PSHARD_ASSIGN_OR_RETURN(uint8_t * mapped,
                          device_->map_host_memory(tables.data(), tables.size_bytes()));
  mapped_tables_.push_back(tables.data());
  return reinterpret_cast<const int32_t*>(mapped);
}

BatchedHybridSession::~BatchedHybridSession() {
  session_.reset(); // before the device it runs on
  for (const int32_t* tables : mapped_tables_)
    device_->unregister_host_memory(tables);
}

Result<BatchLogits> BatchedHybridSession::decode(std::span<const BatchEntry> batch) {
  PSHARD_ASSIGN_OR_RETURN(AssembledPass p, seqs_.assemble(batch, {n_vocab_, max_batch_tokens_,
                                                                  max_logit_rows_, causal_}));
  seqs_.take_pages(p);
  // The same segments with the page tables as the device reads them.
  auto on_device = [](std::vector<SeqSegment> segments, const int32_t* host,
                      const int32_t* device) {
    for (SeqSegment& g : segments)
      g.pages = device + (g.pages - host);
    return segments;
  };
  const std::vector<SeqSegment> device_segments =
      on_device(p.segments, seqs_.tables().data(), device_tables_);
  const std::vector<SeqSegment> device_window_segments =
      on_device(p.window_segments, seqs_.window_tables().data(), device_window_tables_);
  BatchPassInput in{p.tokens,         p.segments,       device_segments,
                    p.logit_rows,     p.longest,        seqs_.rows_spanned(),
                    p.rope_positions, p.embedding_rows, p.hidden_rows};
  in.deepstack = p.deepstack;
  in.window_segments = p.window_segments;
  in.device_window_segments = device_window_segments;
  in.window_rows_in_use = seqs_.window_rows_spanned();
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
