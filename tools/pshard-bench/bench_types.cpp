#include "tools/pshard-bench/bench_types.h"

#include <cmath>

namespace pshard::bench {
namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Sample standard deviation, as llama-bench reports it (0 for one sample).
double stddev(const std::vector<double>& v) {
  if (v.size() < 2)
    return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v)
    s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

} // namespace

std::string BenchRow::test_name() const {
  return n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
}

std::vector<double> BenchRow::samples_ts() const {
  std::vector<double> ts;
  const double tokens = static_cast<double>(n_prompt + n_gen);
  for (double ns : samples_ns)
    ts.push_back(ns > 0 ? tokens * 1e9 / ns : 0);
  return ts;
}

double BenchRow::avg_ts() const { return mean(samples_ts()); }
double BenchRow::stddev_ts() const { return stddev(samples_ts()); }
double BenchRow::avg_ns() const { return mean(samples_ns); }
double BenchRow::stddev_ns() const { return stddev(samples_ns); }

double BenchRow::gflops() const {
  if (n_prompt == 0)
    return 0;
  const double flops = 2.0 * (static_cast<double>(n_prompt) * model.layer_matmul_params +
                              static_cast<double>(model.head_params));
  return flops * avg_ts() / static_cast<double>(n_prompt) / 1e9;
}

double BenchRow::bandwidth_ratio() const {
  if (n_gen == 0 || mem_bw_bytes_per_s <= 0)
    return 0;
  return static_cast<double>(model.bytes_per_token) * avg_ts() / mem_bw_bytes_per_s;
}

} // namespace pshard::bench
