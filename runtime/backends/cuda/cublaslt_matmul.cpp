#include "runtime/backends/cuda/cublaslt_matmul.h"

#include "runtime/backends/cuda/cuda_status.h"

#include <memory>

namespace pshard::cuda {
namespace {

// The largest power of two up to 256 dividing every address and leading dimension the
// GEMM touches: cuBLASLt assumes 256-byte alignment unless told otherwise, and rows of
// odd width or a row chunk's output column make less.
uint32_t alignment(const GemmArgs& g, size_t elem) {
  uint64_t bits = reinterpret_cast<uintptr_t>(g.a) | reinterpret_cast<uintptr_t>(g.b) |
                  reinterpret_cast<uintptr_t>(g.d) | static_cast<uint64_t>(g.lda) * elem |
                  static_cast<uint64_t>(g.k) * elem | static_cast<uint64_t>(g.ldd) * 4 | 256;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

template <typename T, cublasStatus_t (*Destroy)(T)> struct LtHandle {
  T h = nullptr;
  ~LtHandle() {
    if (h)
      (void)Destroy(h);
  }
};
using Desc = LtHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = LtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Pref = LtHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

} // namespace

LtMatmul::~LtMatmul() {
  if (handle_)
    (void)cublasLtDestroy(handle_);
}

Status LtMatmul::create() { return PSHARD_CUBLAS_STATUS(cublasLtCreate(&handle_)); }

Status LtMatmul::gemm(const GemmArgs& g, cudaStream_t stream) {
  const size_t elem = g.type == CUDA_R_32F ? 4 : 2;
  const uint32_t align = alignment(g, elem);
  Desc desc;
  PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&desc.h, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans_a = CUBLAS_OP_T;
  PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(desc.h, CUBLASLT_MATMUL_DESC_TRANSA,
                                                               &trans_a, sizeof(trans_a)));
  Layout a, b, d;
  PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&a.h, g.type, static_cast<uint64_t>(g.k),
                                                           static_cast<uint64_t>(g.m), g.lda));
  PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&b.h, g.type, static_cast<uint64_t>(g.k),
                                                           static_cast<uint64_t>(g.n), g.k));
  PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(
      &d.h, CUDA_R_32F, static_cast<uint64_t>(g.m), static_cast<uint64_t>(g.n), g.ldd));

  const Key key{static_cast<int>(g.type), g.m, g.n, g.k, g.lda, g.ldd, static_cast<int>(align)};
  cublasLtMatmulAlgo_t algo{};
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = algos_.find(key);
    if (it != algos_.end()) {
      algo = it->second;
      cached = true;
    }
  }
  if (!cached) {
    Pref pref;
    PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&pref.h));
    const uint64_t ws = workspace_bytes_;
    PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
        pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      PSHARD_CUBLAS_RETURN_IF_ERROR(
          cublasLtMatmulPreferenceSetAttribute(pref.h, attr, &align, sizeof(align)));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    PSHARD_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulAlgoGetHeuristic(handle_, desc.h, a.h, b.h, d.h,
                                                                 d.h, pref.h, 1, &result, &found));
    if (found == 0)
      return Status(StatusCode::kDeviceError, "cuBLASLt has no algorithm for a " +
                                                  std::to_string(g.m) + "x" + std::to_string(g.n) +
                                                  "x" + std::to_string(g.k) + " GEMM");
    algo = result.algo;
    std::lock_guard<std::mutex> lock(mu_);
    if (algos_.size() < 4096)
      algos_.emplace(key, algo);
  }
  const float alpha = 1.0f, beta = 0.0f;
  return PSHARD_CUBLAS_STATUS(cublasLtMatmul(handle_, desc.h, &alpha, g.a, a.h, g.b, b.h, &beta,
                                             g.d, d.h, g.d, d.h, &algo, workspace_,
                                             workspace_bytes_, stream));
}

} // namespace pshard::cuda
