// Private: float -> block quantizers of each type (layouts in tensor_type.h), behind
// quantize_row. Each writes n / block_values blocks; n is a whole number of blocks.
//
// Q8_0 and Q4_0 (quantize.cpp) reproduce ggml's reference rounding bit for bit.
// The others (quantize_legacy.cpp, quantize_kquants.cpp) are simple reference
// quantizers: they write valid blocks that decode close to the input, but choose
// their scales by plain max/min rules, not by llama-quantize's error-minimising
// searches, so their bytes differ from llama-quantize's for the same floats.
#pragma once

#include <cstdint>

namespace pshard::kernels {

void quantize_q8_0(const float* src, uint8_t* dst, int64_t n);
void quantize_q4_0(const float* src, uint8_t* dst, int64_t n);
void quantize_q4_1(const float* src, uint8_t* dst, int64_t n);
void quantize_q5_0(const float* src, uint8_t* dst, int64_t n);
void quantize_q5_1(const float* src, uint8_t* dst, int64_t n);
void quantize_iq4_nl(const float* src, uint8_t* dst, int64_t n);
void quantize_mxfp4(const float* src, uint8_t* dst, int64_t n);
void quantize_q2_k(const float* src, uint8_t* dst, int64_t n);
void quantize_q3_k(const float* src, uint8_t* dst, int64_t n);
void quantize_q4_k(const float* src, uint8_t* dst, int64_t n);
void quantize_q5_k(const float* src, uint8_t* dst, int64_t n);
void quantize_q6_k(const float* src, uint8_t* dst, int64_t n);
void quantize_iq4_xs(const float* src, uint8_t* dst, int64_t n);

// Shared by the quantizer files.
// The half nearest f, read back as a float: what a stored scale really is.
float as_stored_half(float f);
// round-half-away of v clamped to [lo, hi].
int clamped_round(float v, int lo, int hi);
// The value of largest magnitude (the first of a tie), sign kept; 0 for all zeros.
float signed_max(const float* x, int n);
// The index of the entry of a 16-value table nearest v (the first of a tie).
int nearest_table_index(const int8_t* table, float v);
// The index of the kIq4Values entry nearest v.
int nearest_iq4_index(float v);

} // namespace pshard::kernels
