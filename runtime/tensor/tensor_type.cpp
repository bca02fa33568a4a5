#include "runtime/tensor/tensor_type.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace pshard {
namespace {

constexpr std::array<TensorTypeTraits, 5> kSupported = {{
    {TensorType::kF32, "f32", 1, 4},
    {TensorType::kF16, "f16", 1, 2},
    {TensorType::kQ4_0, "q4_0", 32, 18},
    {TensorType::kQ8_0, "q8_0", 32, 34},
    {TensorType::kBF16, "bf16", 1, 2},
}};

// ggml's type ids 0..39, so errors can name what a file holds.
constexpr std::array<const char*, 40> kGgmlNames = {
    "f32",  "f16",   "q4_0",  "q4_1",  "q4_2(removed)", "q4_3(removed)", "q5_0",   "q5_1",
    "q8_0", "q8_1",  "q2_k",  "q3_k",  "q4_k",          "q5_k",          "q6_k",   "q8_k",
    "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl",  "iq3_s",         "iq2_s",  "iq4_xs",
    "i8",   "i16",   "i32",   "i64",   "f64",           "iq1_m",         "bf16",   "q4_0_4_4",
    "q4_0_4_8", "q4_0_8_8", "tq1_0", "tq2_0", "iq4_nl_4_4", "iq4_nl_4_8", "iq4_nl_8_8", "mxfp4"};

} // namespace

const TensorTypeTraits* tensor_type_traits(uint32_t ggml_type_id) {
  for (const auto& t : kSupported)
    if (static_cast<uint32_t>(t.type) == ggml_type_id)
      return &t;
  return nullptr;
}

const TensorTypeTraits& tensor_type_traits(TensorType type) {
  return *tensor_type_traits(static_cast<uint32_t>(type));
}

std::string ggml_type_name(uint32_t id) {
  if (id < kGgmlNames.size())
    return kGgmlNames[id];
  return "unknown type " + std::to_string(id);
}

Result<TensorType> parse_tensor_type(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& t : kSupported)
    if (lower == t.name)
      return t.type;
  return invalid_argument("unknown weight type '" + std::string(name) +
                          "'; supported: f32, f16, bf16, q8_0, q4_0");
}

Result<size_t> tensor_bytes(TensorType type, int64_t n_values) {
  const auto& t = tensor_type_traits(type);
  if (n_values < 0 || n_values % t.block_values != 0)
    return invalid_argument(std::to_string(n_values) + " values are not a whole number of " +
                            t.name + " blocks of " + std::to_string(t.block_values));
  return static_cast<size_t>(n_values / t.block_values) * t.block_bytes;
}

} // namespace pshard
