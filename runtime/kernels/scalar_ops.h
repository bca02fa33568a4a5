// Private: the portable op kernels of the scalar kernel set.
#pragma once

#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/delta_net.h"

#include <cstdint>

namespace pshard::kernels::scalar {

float sum_squares(const float* x, int64_t n);
void softmax(float* x, int64_t n);
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
void gelu_mul(const float* gate, const float* up, float* out, int64_t n);
void gelu_erf(float* x, int64_t n);
void attend(const AttendHead& a);
void attend_tile(const AttendHead* heads, int64_t n);  // each token alone
void attend_heads(const AttendHead* heads, int64_t n); // each head alone
void delta_step(const DeltaStep& s);
void attend_block(const AttendBlock& b); // attention_block.cpp

} // namespace pshard::kernels::scalar
