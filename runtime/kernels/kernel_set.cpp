#include "runtime/kernels/kernel_set.h"

#include "runtime/kernels/stream.h"

namespace pshard::kernels {

const KernelSet& kernel_set() {
  switch (active_isa()) {
  case Isa::kAvx512: return avx512_kernel_set();
  case Isa::kAvx2Vnni:
    return avx2vnni_kernel_set();
  case Isa::kAvx2: return avx2_kernel_set();
  case Isa::kScalar: break;
  }
  return scalar_kernel_set();
}

const TypeKernels* type_kernels(const KernelSet& set, TensorType type) {
  switch (type) {
  case TensorType::kF32: return &set.f32;
  case TensorType::kF16: return &set.f16;
  case TensorType::kBF16: return &set.bf16;
  case TensorType::kQ8_0: return &set.q8_0;
  case TensorType::kQ4_0: return &set.q4_0;
  case TensorType::kQ4_1: return &set.q4_1;
  case TensorType::kQ5_0: return &set.q5_0;
  case TensorType::kQ5_1: return &set.q5_1;
  case TensorType::kIQ4_NL: return &set.iq4_nl;
  case TensorType::kQ2_K: return &set.q2_k;
  case TensorType::kQ3_K: return &set.q3_k;
  case TensorType::kQ4_K: return &set.q4_k;
  case TensorType::kQ5_K: return &set.q5_k;
  case TensorType::kQ6_K: return &set.q6_k;
  case TensorType::kIQ4_XS: return &set.iq4_xs;
  case TensorType::kMXFP4: return &set.mxfp4;
  }
  return nullptr;
}

} // namespace pshard::kernels

namespace pshard {

float stream_sum(const float* data, int64_t n) { return kernels::kernel_set().stream_sum(data, n); }

const char* kernels_isa_name() { return kernels::isa_name(kernels::active_isa()); }

} // namespace pshard
