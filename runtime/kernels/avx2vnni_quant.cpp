// The AVX2-VNNI kernel set, for CPUs with AVX-VNNI but no AVX-512 (Intel's client cores
// since Alder Lake): AVX2's kernels, but the legacy blocks' int8 sums (avx2_legacy_tile.h)
// by one vpdpbusd where AVX2 needs vpmaddubsw and vpmaddwd. The int32 sums are the same,
// so are the bits. The K-quants' tile likewise takes one vpdpwssd (avx2vnni_kquant.cpp).
#include "runtime/kernels/kernel_set.h"
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVXVNNI__)
#include "runtime/kernels/avx2_legacy_tile.h"

namespace pshard::kernels {
namespace {

constexpr KernelSet kAvx2Vnni = avx2_family_set(Isa::kAvx2Vnni);

} // namespace

const KernelSet& avx2vnni_kernel_set() { return kAvx2Vnni; }

} // namespace pshard::kernels
#else
namespace pshard::kernels {
const KernelSet& avx2vnni_kernel_set() { return avx2_kernel_set(); }
} // namespace pshard::kernels
#endif
