#include "runtime/model/kv_types.h"

#include <string>

namespace pshard {

bool is_kv_type(TensorType t) {
  return t == TensorType::kF32 || t == TensorType::kF16 || t == TensorType::kQ8_0;
}

Result<TensorType> parse_kv_type(std::string_view name) {
  auto t = parse_tensor_type(name);
  if (!t.ok() || !is_kv_type(*t))
    return invalid_argument("KV cache type '" + std::string(name) +
                            "' is not one of f32, f16, q8_0");
  return *t;
}

Status check_kv_types(TensorType k, TensorType v, int64_t head_dim) {
  for (TensorType t : {k, v}) {
    if (!is_kv_type(t))
      return invalid_argument(std::string("KV cache type ") + tensor_type_name(t) +
                              " is not one of f32, f16, q8_0");
    if (t == TensorType::kQ8_0 && head_dim % 32 != 0)
      return unsupported("a q8_0 KV cache needs a head size that is a multiple of 32; this "
                         "model's is " + std::to_string(head_dim) + " (use f16)");
  }
  return Status::ok_status();
}

} // namespace pshard
