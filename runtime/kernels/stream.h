// A streaming read of a float buffer with the active ISA path's widest loads, for
// memory-bandwidth probes (pshard-bench, profiling): reading as fast as the matmul
// kernels can makes "achieved / measured bandwidth" a fair ratio.
//
//   float sink = stream_sum(buffer, n);  // buffer 64-byte aligned, n a multiple of 64
#pragma once

#include <cstdint>

namespace pshard {

float stream_sum(const float* data, int64_t n);

// The ISA path the kernels use now ("scalar", "avx2", "avx512").
const char* kernels_isa_name();

} // namespace pshard
