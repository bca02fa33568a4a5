#include "tools/pshard-bench/batched_bench.h"

#include "runtime/core/thread_pool.h"
#include "runtime/serve/sequence_engine.h"
#include "tools/common/cli_kv_options.h"
#include "tools/common/size_parse.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace pshard::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Prompt tokens: a fixed spread over the vocabulary (the speed does not depend on them).
TokenId token_at(int64_t seq, int64_t pos, int64_t n_vocab) {
  return static_cast<TokenId>((seq * 131 + pos * 7 + 1) % n_vocab);
}

// Passes of at most `n_batch` entries (and at most the engine's: a schedule's largest
// tier) over `entries`, failing on the first refusal.
Status decode_in_passes(BatchDecoder& engine, const std::vector<BatchEntry>& entries,
                        int64_t n_batch) {
  const auto step = static_cast<size_t>(std::min(n_batch, engine.max_batch_tokens()));
  for (size_t at = 0; at < entries.size(); at += step) {
    const size_t n = std::min(entries.size() - at, step);
    PSHARD_ASSIGN_OR_RETURN(BatchLogits l,
                            engine.decode(std::span<const BatchEntry>(entries.data() + at, n)));
    (void)l;
  }
  return Status::ok_status();
}

Status run_row(BatchDecoder& engine, int64_t n_batch, BatchedRow& row) {
  std::vector<SeqId> seqs;
  for (int64_t s = 0; s < row.pl; ++s) {
    PSHARD_ASSIGN_OR_RETURN(SeqId id, engine.open_sequence());
    seqs.push_back(id);
  }
  const int64_t n_vocab = engine.n_vocab();
  std::vector<BatchEntry> prompt;
  for (int64_t s = 0; s < row.pl; ++s)
    for (int64_t i = 0; i < row.pp; ++i)
      prompt.push_back({seqs[static_cast<size_t>(s)], token_at(s, i, n_vocab), i + 1 == row.pp});
  Status st;
  auto t0 = Clock::now();
  st = decode_in_passes(engine, prompt, n_batch);
  row.t_pp = seconds_since(t0);
  t0 = Clock::now();
  for (int64_t step = 0; st.ok() && step < row.tg; ++step) {
    std::vector<BatchEntry> pass;
    for (int64_t s = 0; s < row.pl; ++s)
      pass.push_back({seqs[static_cast<size_t>(s)], token_at(s, row.pp + step, n_vocab), true});
    st = decode_in_passes(engine, pass, n_batch);
  }
  row.t_tg = seconds_since(t0);
  for (SeqId id : seqs)
    engine.close_sequence(id);
  return st;
}

} // namespace

Result<BatchedReport> run_batched_bench(const BatchedOptions& o,
                                        const std::function<void(const BatchedRow&)>& progress) {
  BatchedReport r;
  r.model = std::filesystem::path(o.model_path).filename().string();
  PSHARD_ASSIGN_OR_RETURN(auto model, Model::load(o.model_path));
  std::optional<Schedule> schedule;
  if (!o.target.schedule_path.empty()) {
    PSHARD_ASSIGN_OR_RETURN(Schedule s, Schedule::load_file(o.target.schedule_path));
    PSHARD_RETURN_IF_ERROR(s.check_model(model->file()));
    schedule.emplace(std::move(s));
  }
  SequenceEngineOptions e;
  const std::string backend =
      o.target.backend == "auto" ? (schedule ? "emu" : "cpu") : o.target.backend;
  PSHARD_ASSIGN_OR_RETURN(e.device.backend, parse_device_backend(backend));
  r.backend = backend;
  if (!o.target.vram.empty()) {
    PSHARD_ASSIGN_OR_RETURN(e.device.vram_budget, parse_size(o.target.vram));
  }
  e.device.emu_pcie_gbps = o.target.emu_pcie_gbps;
  e.n_threads = o.threads;
  int64_t longest = 1;
  for (int64_t pp : o.n_pp)
    for (int64_t tg : o.n_tg)
      longest = std::max(longest, pp + tg);
  e.n_ctx = o.n_ctx > 0 ? o.n_ctx : longest;
  e.n_batch = o.n_batch;
  e.swa_full = o.swa_full;
  e.kv_type_k = cli::kv_type_named(o.cache_type_k); // -ctk / -ctv
  e.kv_type_v = cli::kv_type_named(o.cache_type_v);
  e.max_sequences = *std::max_element(o.n_pl.begin(), o.n_pl.end());
  PSHARD_ASSIGN_OR_RETURN(auto engine,
                          make_sequence_engine(*model, schedule ? &*schedule : nullptr, e));
  if (engine->n_ctx() < longest)
    return invalid_argument(
        "a sequence holds " + std::to_string(engine->n_ctx()) +
        " positions, fewer than the longest test's PP + TG = " + std::to_string(longest) +
        "; give -c (at most the context the schedule was compiled for)");
  r.threads = o.threads > 0 ? o.threads : ThreadPool::hardware_threads();
  r.n_ctx = engine->n_ctx();
  r.n_batch = o.n_batch;
  r.vram_budget = engine->stats().vram_budget;

  BatchedRow warm{std::min<int64_t>(o.n_pp.front(), 8), 2, 1}; // untimed: first-touch costs
  PSHARD_RETURN_IF_ERROR(run_row(*engine, o.n_batch, warm));
  const SessionStats before = engine->stats().sessions;
  for (int64_t pp : o.n_pp)
    for (int64_t tg : o.n_tg)
      for (int64_t pl : o.n_pl) {
        BatchedRow row{pp, tg, pl};
        if (progress)
          progress(row);
        PSHARD_RETURN_IF_ERROR(run_row(*engine, o.n_batch, row));
        r.rows.push_back(row);
      }
  r.engine = engine->stats();
  r.kv = engine->kv_pages();
  const ModelHParams& hp = model->hparams();
  const TensorType k = e.kv_type_k.value_or(kDefaultKvType),
                   v = e.kv_type_v.value_or(kDefaultKvType);
  const uint64_t page_row =
      r.kv.page_tokens * (tensor_row_bytes(k, hp.kv_dim()) + tensor_row_bytes(v, hp.kv_dim()));
  for (int64_t il = 0; il < hp.n_layer; ++il)
    (r.kv.window_total_pages > 0 && hp.attention_window(il) > 0 ? r.kv_window_page_bytes
                                                                : r.kv_page_bytes) += page_row;
  // The table's passes only, not the warm-up's.
  for (PlanUse& u : r.engine.sessions.plans)
    for (const PlanUse& w : before.plans)
      if (w.budget_bytes == u.budget_bytes && w.tier == u.tier) {
        u.passes -= w.passes;
        u.tokens -= w.tokens;
        u.measured_ms_total -= w.measured_ms_total;
      }
  return r;
}

} // namespace pshard::bench
