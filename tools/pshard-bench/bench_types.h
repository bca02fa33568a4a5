// pshard-bench's plan and results: one row per (model, ISA, threads, test), with
// llama-bench's field names where llama-bench has the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pshard::bench {

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<int64_t> n_prompt = {512};
  std::vector<int64_t> n_gen = {128};
  std::vector<int> threads;
  std::vector<std::string> isas;       // empty: the active path (PSHARD_ISA caps it)
  std::vector<int64_t> use_mmap = {1}; // 1: weights from the file mapping; 0: read into RAM
  int repetitions = 5;
  std::string output = "md";
  int64_t bandwidth_mib = 512; // buffer for the read-bandwidth probe, >> last-level cache
  std::string text_path;       // the tests' tokens from this text; empty: random ids
};

// What a model reads and computes per token, for the derived columns.
struct ModelFacts {
  std::string filename;
  std::string type_label;  // "llama 1.1B F16"
  std::string weight_type; // "f16"
  uint64_t size_bytes = 0; // all tensors in the file
  uint64_t n_params = 0;
  uint64_t bytes_per_token = 0;     // weight bytes one decoded token reads
  uint64_t layer_matmul_params = 0; // multiply-adds per token in the layers
  uint64_t head_params = 0;         // multiply-adds of the output head (last token only)
};

struct BenchRow {
  ModelFacts model;
  std::string isa;
  int n_threads = 0;
  bool use_mmap = true;
  int64_t n_batch = 0;
  int64_t n_prompt = 0;
  int64_t n_gen = 0;
  std::vector<double> samples_ns; // one per repetition
  double mem_bw_bytes_per_s = 0;  // measured with the same thread count
  std::string backend = "cpu";    // "cpu", or a schedule's device and budget: "emu 900M"
  std::string plans;              // under a schedule: the plans the timed runs used
  std::string tokens = "random";  // where the tests' tokens came from: "random", or the text

  std::string test_name() const; // "pp512", "tg128"
  std::vector<double> samples_ts() const;
  double avg_ts() const;
  double stddev_ts() const;
  double avg_ns() const;
  double stddev_ns() const;
  // pp rows: matmul GFLOP/s; tg rows: 0.
  double gflops() const;
  // tg rows: bytes_per_token * tokens/s / measured bandwidth; pp rows: 0.
  double bandwidth_ratio() const;
};

} // namespace pshard::bench
