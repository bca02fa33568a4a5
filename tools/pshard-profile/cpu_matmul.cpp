#include "tools/pshard-profile/cpu_matmul.h"

#include "runtime/kernels/matmul.h"
#include "runtime/kernels/quantize.h"
#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace pshard::profiling {
namespace {

constexpr int64_t kTileRows = 16;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

} // namespace

Result<MatmulWeights> MatmulWeights::make(TensorType type, uint64_t bucket_bytes, int64_t cols) {
  MatmulWeights w;
  w.type = type;
  w.bucket_bytes = bucket_bytes;
  w.cols = cols;
  PSHARD_ASSIGN_OR_RETURN(w.row_bytes, tensor_bytes(type, cols));
  w.rows = std::max<int64_t>(1, static_cast<int64_t>(bucket_bytes / w.row_bytes));
  const uint64_t matrix = static_cast<uint64_t>(w.rows) * w.row_bytes;
  w.copies = static_cast<int64_t>((kColdHostFootprint + matrix - 1) / matrix);
  w.data = HostBuffer(static_cast<size_t>(w.copies * w.rows) * w.row_bytes);
  if (!w.data.ok())
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate " + std::to_string(w.data.size()) + " bytes of weights");

  const std::vector<float> values = random_floats(static_cast<size_t>(kTileRows * cols), 1);
  std::vector<uint8_t> tile(static_cast<size_t>(kTileRows) * w.row_bytes);
  for (int64_t r = 0; r < kTileRows; ++r)
    PSHARD_RETURN_IF_ERROR(
        quantize_row(type, values.data() + r * cols, tile.data() + r * w.row_bytes, cols));
  const int64_t all_rows = w.copies * w.rows;
  for (int64_t r = 0; r < all_rows; r += kTileRows) {
    const int64_t n = std::min(kTileRows, all_rows - r);
    std::memcpy(w.data.data() + r * w.row_bytes, tile.data(), static_cast<size_t>(n) * w.row_bytes);
  }
  return w;
}

fb::MatmulPointT time_cpu_matmul(const MatmulWeights& w, int64_t n_tokens, ThreadPool& pool,
                                 double budget_s, MatmulRate& rate) {
  // Rows per timed call: the whole matrix unless that would exceed a fifth of the
  // budget, and never so few that the threads get less than 64 rows each.
  int64_t rows_per_call = w.rows;
  if (rate.row_token_s > 0) {
    const double target_s = budget_s / 5;
    const double fit = target_s / (rate.row_token_s * static_cast<double>(n_tokens));
    const int64_t floor_rows = std::min<int64_t>(w.rows, 64 * pool.size());
    rows_per_call = std::clamp<int64_t>(static_cast<int64_t>(fit), floor_rows, w.rows);
  }
  const int64_t n_slices = std::max<int64_t>(1, w.rows / rows_per_call);

  const std::vector<float> x =
      random_floats(static_cast<size_t>(n_tokens * w.cols), 2 + static_cast<uint32_t>(n_tokens));
  std::vector<float> y(static_cast<size_t>(n_tokens * rows_per_call));
  const Timing t = time_repeated(
      [&](int rep) {
        MatrixView view;
        view.type = w.type;
        // Every copy's first slice, then every copy's second, ...: each call reads
        // rows no call read since the cache was last filled with others.
        view.data = w.copy(rep) + ((rep / w.copies) % n_slices) * rows_per_call * w.row_bytes;
        view.rows = rows_per_call;
        view.cols = w.cols;
        view.row_bytes = w.row_bytes;
        matmul(view, x.data(), n_tokens, y.data(), pool);
      },
      budget_s);
  rate.row_token_s = t.seconds / static_cast<double>(rows_per_call * n_tokens);

  fb::MatmulPointT p;
  p.weight_type = static_cast<fb::WeightType>(w.type);
  p.n_tokens = static_cast<uint32_t>(n_tokens);
  p.matrix_bytes = w.bucket_bytes;
  p.rows = static_cast<uint32_t>(w.rows);
  p.cols = static_cast<uint32_t>(w.cols);
  p.threads = static_cast<uint32_t>(pool.size());
  p.seconds = t.seconds * static_cast<double>(w.rows) / static_cast<double>(rows_per_call);
  p.flops_per_s = 2.0 * static_cast<double>(rows_per_call * w.cols * n_tokens) / t.seconds;
  p.repetitions = t.repetitions;
  return p;
}

} // namespace pshard::profiling
