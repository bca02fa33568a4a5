// Weight types pshard runs, with GGUF's (ggml's) numeric ids and block layouts.
//
//   F32   4 bytes/value
//   F16   2 bytes/value, IEEE half
//   BF16  2 bytes/value, upper half of an IEEE float
//   Q8_0  blocks of 32 values: { f16 d; int8 q[32]; }               34 bytes, x = d * q
//   Q4_0  blocks of 32 values: { f16 d; uint8 qs[16]; }             18 bytes, x = d * (nib - 8)
//         value j < 16 is the low nibble of qs[j], value j + 16 its high nibble
//
// Rows of a quantized tensor must hold a whole number of blocks.
#pragma once

#include "runtime/core/status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pshard {

enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kBF16 = 30,
};

struct TensorTypeTraits {
  TensorType type;
  const char* name;        // "f32", "q8_0", as users type them
  int64_t block_values;    // values per block (1 for float types)
  size_t block_bytes;      // bytes per block
};

// Traits of a supported type; nullptr for any other ggml id.
const TensorTypeTraits* tensor_type_traits(uint32_t ggml_type_id);
const TensorTypeTraits& tensor_type_traits(TensorType type);

inline const char* tensor_type_name(TensorType type) { return tensor_type_traits(type).name; }

// Name of any ggml type id, supported or not (for error messages), e.g. "q4_k".
std::string ggml_type_name(uint32_t ggml_type_id);

// Parses "f32", "F16", "q8_0"… (case-insensitive).
Result<TensorType> parse_tensor_type(std::string_view name);

// Bytes of `n_values` values; fails when n_values is not a whole number of blocks.
Result<size_t> tensor_bytes(TensorType type, int64_t n_values);

} // namespace pshard
