// The AVX2 kernel set: the legacy blocks' tile (avx2_legacy_tile.h, int8 pairs by
// vpmaddubsw + vpmaddwd), the K-quant, float and op kernels of the other avx2_*.cpp files.
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "runtime/kernels/avx2_legacy_tile.h"

namespace pshard::kernels {
namespace {

constexpr KernelSet kAvx2 = avx2_family_set(Isa::kAvx2);

} // namespace

const KernelSet& avx2_kernel_set() { return kAvx2; }

} // namespace pshard::kernels
#else
namespace pshard::kernels {
const KernelSet& avx2_kernel_set() { return scalar_kernel_set(); }
} // namespace pshard::kernels
#endif
