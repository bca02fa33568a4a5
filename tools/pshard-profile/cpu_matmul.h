// Timing the project's CPU matmul (runtime/kernels/matmul.h) on one weight type and
// matrix-size bucket.
//
// A bucket's matrix is cols = 4096 wide (a typical hidden size; the suite also times a
// few other widths) and as many rows as the bucket's bytes hold. The weights are a small quantized tile repeated (the values do
// not change the speed; quantizing 256 MiB would take longer than timing it).
//
// A model pass reads each of its matrices once, from DRAM (models are far larger than
// the last-level cache), so a small bucket's matrix is laid out in copies that fill
// kColdHostFootprint (device_measurer.h) and the timed calls rotate through them: re-reading one 1 MiB matrix
// would time it from the cache, twice as fast as a model ever sees it.
//
// Large token counts on large matrices would take seconds per product, so a timed call
// may run a slice of the rows, rotating through the matrix: the slice comes from DRAM
// (the matrix is far larger than the cache) exactly as the whole product's rows would,
// and the reported time is scaled to the whole matrix.
//
//   PSHARD_ASSIGN_OR_RETURN(MatmulWeights w, MatmulWeights::make(TensorType::kQ4_0, 16 << 20));
//   MatmulRate rate;   // carries the speed estimate from one token count to the next
//   fb::MatmulPointT cell = time_cpu_matmul(w, /*n_tokens=*/4, pool, /*budget_s=*/0.3, rate);
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"
#include "runtime/profile/device_measurer.h"
#include "runtime/tensor/tensor_type.h"
#include "schemas/profile_generated.h"
#include "tools/pshard-profile/host_buffer.h"

#include <cstdint>

namespace pshard::profiling {

inline constexpr int64_t kMatmulCols = 4096;
inline constexpr const char* kCpuMatmulOp = "pshard::matmul (runtime/kernels/matmul.h), cols=4096";

struct MatmulWeights {
  TensorType type = TensorType::kF32;
  uint64_t bucket_bytes = 0;
  int64_t rows = 0;
  int64_t cols = kMatmulCols;
  size_t row_bytes = 0;
  int64_t copies = 1; // of the rows x cols matrix, back to back in data
  HostBuffer data;

  const uint8_t* copy(int64_t i) const {
    return data.data() + static_cast<size_t>(i % copies) * static_cast<size_t>(rows) * row_bytes;
  }

  static Result<MatmulWeights> make(TensorType type, uint64_t bucket_bytes,
                                    int64_t cols = kMatmulCols);
};

// Seconds per row per token from the last cell measured on the same weights and pool.
struct MatmulRate {
  double row_token_s = 0;
};

fb::MatmulPointT time_cpu_matmul(const MatmulWeights& w, int64_t n_tokens, ThreadPool& pool,
                                 double budget_s, MatmulRate& rate);

} // namespace pshard::profiling
