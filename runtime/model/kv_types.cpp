#include "runtime/model/kv_types.h"

#include <string>
#include <utility>

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

Status check_kv_types(TensorType k, TensorType v, int64_t head_dim, int64_t value_dim) {
  const std::pair<TensorType, int64_t> parts[] = {{k, head_dim},
                                                  {v, value_dim > 0 ? value_dim : head_dim}};
  for (const auto& [t, dim] : parts) {
    if (!is_kv_type(t))
      return invalid_argument(std::string("KV cache type ") + tensor_type_name(t) +
                              " is not one of f32, f16, q8_0");
    if (t == TensorType::kQ8_0 && dim % 32 != 0)
      return unsupported("a q8_0 KV cache needs a head size that is a multiple of 32; this "
                         "model's is " + std::to_string(dim) + " (use f16)");
  }
  return Status::ok_status();
}

} // namespace pshard
