// pshard-bench's batched mode, in the shape of llama-batched-bench: for every prompt
// length PP, generation length TG and number of sequences B, B sequences each read a
// PP-token prompt (passes of up to -b tokens over all of them), then decode TG tokens
// together (one pass of B tokens per step). It drives the serving engine (a BatchDecoder,
// runtime/serve/sequence_engine.h) on cpu, or on emu/cuda with a schedule; each pass runs
// the plan of its tier. Columns as llama-batched-bench's: N_KV = B * (PP + TG),
// S_PP = B * PP / T_PP, S_TG = B * TG / T_TG, S = N_KV / (T_PP + T_TG).
//
//   pshard-bench -m model.gguf -npp 128 -ntg 32 -npl 1,4,16 -s model.pshard --backend emu
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/core/status.h"
#include "tools/common/hybrid_target.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace pshard::bench {

struct BatchedOptions {
  std::string model_path;
  HybridTarget target; // empty schedule_path: everything on the CPU; auto: emu with one
  std::vector<int64_t> n_pp = {128};
  std::vector<int64_t> n_tg = {128};
  std::vector<int64_t> n_pl = {1, 2, 4, 8, 16};
  int threads = 0;           // 0: all hardware threads
  int64_t n_ctx = 0;         // per sequence; 0: the largest PP + TG
  int64_t n_batch = 2048;    // tokens one pass carries at most
  bool swa_full = false;     // sliding-window layers: every position's pages
  std::string cache_type_k, cache_type_v; // -ctk / -ctv ("": the default)
  std::string output = "md"; // md or jsonl
};

struct BatchedRow {
  int64_t pp = 0, tg = 0, pl = 0;
  double t_pp = 0, t_tg = 0; // seconds
  int64_t n_kv() const { return pl * (pp + tg); }
  double speed_pp() const { return t_pp > 0 ? static_cast<double>(pl * pp) / t_pp : 0; }
  double speed_tg() const { return t_tg > 0 ? static_cast<double>(pl * tg) / t_tg : 0; }
  double speed() const { return t_pp + t_tg > 0 ? static_cast<double>(n_kv()) / (t_pp + t_tg) : 0; }
};

struct BatchedReport {
  std::string model, backend;
  int threads = 0;
  int64_t n_ctx = 0, n_batch = 0;
  uint64_t vram_budget = 0;
  KvPageStats kv; // the engine's pools (their pages), after the last row
  uint64_t kv_page_bytes = 0, kv_window_page_bytes = 0; // one page of every layer of a pool
  std::vector<BatchedRow> rows;
  BatchEngineStats engine; // every pass of every row: plans per tier
};

// `progress` is told each row before it runs.
Result<BatchedReport> run_batched_bench(const BatchedOptions& o,
                                        const std::function<void(const BatchedRow&)>& progress);

void print_batched_markdown(std::ostream& out, const BatchedReport& r);
// One JSON object per row, with llama-batched-bench's jsonl keys.
void print_batched_jsonl(std::ostream& out, const BatchedReport& r);

} // namespace pshard::bench
