// Element types of the KV cache: F32, F16 (llama.cpp's default) and Q8_0 (blocks of 32
// with an f16 scale: half F16's bytes). K and V may differ (llama.cpp's -ctk / -ctv).
//
//   PSHARD_ASSIGN_OR_RETURN(TensorType k, parse_kv_type("q8_0"));
//   PSHARD_RETURN_IF_ERROR(check_kv_types(k, v, hp.head_dim));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <string_view>

namespace pshard {

inline constexpr TensorType kDefaultKvType = TensorType::kF16;

bool is_kv_type(TensorType type);
// "f32", "f16", "q8_0" (case-insensitive); kInvalidArgument naming the choices otherwise.
Result<TensorType> parse_kv_type(std::string_view name);
// Q8_0 rows are cut per head, so a quantized cache needs heads of whole 32-value blocks.
// value_dim: a value head's size when it differs from a key head's (0: the same).
Status check_kv_types(TensorType k_type, TensorType v_type, int64_t head_dim,
                      int64_t value_dim = 0);

} // namespace pshard
