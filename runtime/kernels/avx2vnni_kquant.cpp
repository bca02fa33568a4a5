// AVX2-VNNI kernels for the K-quants: AVX2's (avx2_kquant_vectors.h), compiled for AVX-VNNI
// so that each chunk's scaled pair sums are one vpdpwssd (the same int32 lanes, so the
// same bits as AVX2).
#include "runtime/kernels/simd_exports.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVXVNNI__)
#include "runtime/kernels/avx2_kquant_vectors.h"

namespace pshard::kernels::avx2vnni {

PSHARD_DEFINE_KQUANT_EXPORTS(Avx2Vectors)

} // namespace pshard::kernels::avx2vnni
#endif
