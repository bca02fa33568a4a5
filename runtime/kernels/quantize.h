// Row conversion between float and every weight type (see tensor_type.h for the
// block layouts). Quantization follows ggml's reference rounding so files written
// by pshard-mkmodel match what llama.cpp would produce from the same floats.
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>

namespace pshard {

// Writes tensor_bytes(type, n) bytes to dst. Fails if n is not a whole number of blocks.
Status quantize_row(TensorType type, const float* src, void* dst, int64_t n);

// Reads n values (n a whole number of blocks) into dst.
void dequantize_row(TensorType type, const void* src, float* dst, int64_t n);

} // namespace pshard
