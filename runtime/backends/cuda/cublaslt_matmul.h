// cuBLASLt GEMMs for prefill: D (f32) = op(A) * B with A the weight matrix, for A/B
// of f32, f16 or bf16 and f32 accumulation (CUBLAS_COMPUTE_32F: no TF32, so f32
// weights keep f32 accuracy).
//
// Row-major y[n x rows] = x[n x cols] · Wᵀ is, in cuBLAS's column-major terms,
// D[rows x n] = Aᵀ · B with A the weight seen as cols x rows (lda = its row stride in
// elements), B = x as cols x n (ld = cols), D = y (ld = the full row count, so a row
// chunk writes a column block of y).
//
// Algorithms come from cublasLtMatmulAlgoGetHeuristic once per shape, type and pointer
// alignment, then are cached: the heuristic costs more than a small GEMM.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <map>
#include <mutex>
#include <tuple>

namespace pshard::cuda {

struct GemmArgs {
  cudaDataType type = CUDA_R_32F; // A and B
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr; // ld = k
  float* d = nullptr;
  int64_t ldd = 0;
  int64_t m = 0, n = 0, k = 0;
};

class LtMatmul {
public:
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul();

  Status create();
  // cuBLASLt's workspace (device memory the caller owns, alive while GEMMs run).
  void set_workspace(void* ws, size_t bytes) {
    workspace_ = ws;
    workspace_bytes_ = bytes;
  }
  Status gemm(const GemmArgs& g, cudaStream_t stream);

private:
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int>;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::mutex mu_;
  std::map<Key, cublasLtMatmulAlgo_t> algos_;
};

} // namespace pshard::cuda
