// Device-side readers of GGUF's weight layouts (runtime/tensor/tensor_type.h draws them).
#pragma once

#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace pshard::cuda::kernels {

__device__ __forceinline__ float half_at(const uint8_t* p) {
  // Blocks are 34 or 18 bytes long, so a block's scale is only 2-byte aligned.
  const unsigned short bits = static_cast<unsigned short>(p[0] | (p[1] << 8));
  return __half2float(__ushort_as_half(bits));
}

// Value c of a row of type T.
template <TensorType T> __device__ __forceinline__ float weight_at(const uint8_t* row, int64_t c) {
  if constexpr (T == TensorType::kF32) {
    return reinterpret_cast<const float*>(row)[c];
  } else if constexpr (T == TensorType::kF16) {
    return __half2float(reinterpret_cast<const __half*>(row)[c]);
  } else if constexpr (T == TensorType::kBF16) {
    return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[c]);
  } else if constexpr (T == TensorType::kQ8_0) {
    const uint8_t* b = row + (c / 32) * 34;
    return half_at(b) * static_cast<float>(static_cast<int8_t>(b[2 + c % 32]));
  } else {
    const uint8_t* b = row + (c / 32) * 18;
    const int j = static_cast<int>(c % 32);
    const uint8_t q = b[2 + (j & 15)];
    return half_at(b) * static_cast<float>(((j < 16) ? (q & 15) : (q >> 4)) - 8);
  }
}

// Calls f(TensorType constant) for a runtime type; false for an unknown type.
template <typename F> bool dispatch_type(TensorType t, F&& f) {
  switch (t) {
  case TensorType::kF32:
    f(std::integral_constant<TensorType, TensorType::kF32>{});
    return true;
  case TensorType::kF16:
    f(std::integral_constant<TensorType, TensorType::kF16>{});
    return true;
  case TensorType::kBF16:
    f(std::integral_constant<TensorType, TensorType::kBF16>{});
    return true;
  case TensorType::kQ8_0:
    f(std::integral_constant<TensorType, TensorType::kQ8_0>{});
    return true;
  case TensorType::kQ4_0:
    f(std::integral_constant<TensorType, TensorType::kQ4_0>{});
    return true;
  }
  return false;
}

inline unsigned blocks_for(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

} // namespace pshard::cuda::kernels
