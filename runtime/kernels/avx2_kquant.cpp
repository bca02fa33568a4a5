// AVX2 kernels for the K-quants (Q2_K..Q6_K, IQ4_XS): kquant_tile.h over the 256-bit
// policy of avx2_kquant_vectors.h.
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "runtime/kernels/avx2_kquant_vectors.h"

namespace pshard::kernels::avx2 {

PSHARD_DEFINE_KQUANT_EXPORTS(Avx2Vectors)

} // namespace pshard::kernels::avx2
#endif
