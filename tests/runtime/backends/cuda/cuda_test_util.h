// Helpers of the CUDA backend tests: skipping without a GPU (with the driver's reason),
// a bump allocator over the device arena, uploads and downloads, and the error measure
// the conformance bounds are stated in.
#pragma once

#include "runtime/backends/cuda/cuda_device.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

// Skips the test, naming why there is no usable GPU, e.g. "no CUDA device:
// cudaGetDeviceCount returned 35 (CUDA driver version is insufficient for CUDA runtime version)".
#define PSHARD_SKIP_WITHOUT_CUDA()                                                                 \
  do {                                                                                             \
    const ::pshard::Status s_ = ::pshard::cuda::cuda_device_available();                           \
    if (!s_.ok())                                                                                  \
      GTEST_SKIP() << s_.message();                                                                \
  } while (0)

namespace pshard::cuda_testing {

// An arena of `bytes` for a test's buffers plus the kernel workspace at its tail, handed
// to set_workspace as the executor hands a plan's workspace buffer (the kernels that
// need scratch — prefill GEMMs, embed_rows, MoE — fail without one).
inline Status allocate_arena_with_workspace(CudaDevice& d, uint64_t bytes) {
  const uint64_t operands = (bytes + 255) / 256 * 256;
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base,
                          d.allocate_arena(operands + cuda::CudaWorkspace::kBytes));
  d.set_workspace(base + operands, cuda::CudaWorkspace::kBytes);
  return d.synchronize();
}

// Places buffers in the arena one after the other (256-byte aligned), before the
// workspace when there is one, and copies data in and out synchronously; tests read
// results only after device.synchronize().
class DeviceBuffers {
public:
  explicit DeviceBuffers(CudaDevice& d) : d_(d) {}
  uint8_t* alloc(size_t bytes) {
    uint8_t* p = d_.arena() + used_;
    used_ += (bytes + 255) / 256 * 256;
    const uint64_t room = d_.workspace() ? static_cast<uint64_t>(d_.workspace() - d_.arena())
                                         : d_.arena_bytes();
    EXPECT_LE(used_, room) << "test arena too small";
    return p;
  }
  template <typename T> T* upload(const std::vector<T>& v) {
    auto* p = reinterpret_cast<T*>(alloc(v.size() * sizeof(T)));
    EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    settle();
    return p;
  }
  float* zeros(size_t n) {
    auto* p = reinterpret_cast<float*>(alloc(n * 4));
    EXPECT_EQ(cudaMemset(p, 0, n * 4), cudaSuccess);
    settle();
    return p;
  }
  template <typename T> std::vector<T> download(const T* p, size_t n) {
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }

private:
  // cudaMemcpy and cudaMemset run on the legacy default stream, which the device's
  // non-blocking queues do not wait for (a memset is asynchronous, a pageable upload may
  // return before its DMA lands): the kernels a test enqueues next must see the data.
  static void settle() { EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess); }

  CudaDevice& d_;
  size_t used_ = 0;
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

// ||got - want|| / ||want|| (L2 over the whole output): one number per op that does not
// blow up where single outputs cancel to near zero.
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    num += d * d;
    den += static_cast<double>(want[i]) * want[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// The conformance bound of one product with weights of type t (cuda_conformance_test.cpp's
// header says where each comes from).
inline double matmul_bound(TensorType t) {
  switch (t) {
  case TensorType::kF32:
    return 1e-5;
  case TensorType::kF16:
    return 2e-3;
  case TensorType::kBF16:
    return 1e-2;
  default:
    return 2e-2;
  }
}

} // namespace pshard::cuda_testing
