#include "runtime/tensor/tensor_type.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace pshard {
namespace {

constexpr std::array<TensorTypeTraits, 16> kSupported = {{
    {TensorType::kF32, "f32", 1, 4},
    {TensorType::kF16, "f16", 1, 2},
    {TensorType::kQ4_0, "q4_0", 32, 18},
    {TensorType::kQ4_1, "q4_1", 32, 20},
    {TensorType::kQ5_0, "q5_0", 32, 22},
    {TensorType::kQ5_1, "q5_1", 32, 24},
    {TensorType::kQ8_0, "q8_0", 32, 34},
    {TensorType::kQ2_K, "q2_k", 256, 84},
    {TensorType::kQ3_K, "q3_k", 256, 110},
    {TensorType::kQ4_K, "q4_k", 256, 144},
    {TensorType::kQ5_K, "q5_k", 256, 176},
    {TensorType::kQ6_K, "q6_k", 256, 210},
    {TensorType::kIQ4_NL, "iq4_nl", 32, 18},
    {TensorType::kIQ4_XS, "iq4_xs", 256, 136},
    {TensorType::kBF16, "bf16", 1, 2},
    {TensorType::kMXFP4, "mxfp4", 32, 17},
}};

constexpr std::array<TensorType, kSupported.size()> supported_ids() {
  std::array<TensorType, kSupported.size()> ids{};
  for (size_t i = 0; i < kSupported.size(); ++i)
    ids[i] = kSupported[i].type;
  return ids;
}
constexpr std::array<TensorType, kSupported.size()> kSupportedIds = supported_ids();

// ggml's type ids 0..39, so errors can name what a file holds.
constexpr std::array<const char*, 40> kGgmlNames = {
    "f32",   "f16",        "q4_0",       "q4_1",       "q4_2(removed)", "q4_3(removed)", "q5_0",
    "q5_1",  "q8_0",       "q8_1",       "q2_k",       "q3_k",          "q4_k",          "q5_k",
    "q6_k",  "q8_k",       "iq2_xxs",    "iq2_xs",     "iq3_xxs",       "iq1_s",         "iq4_nl",
    "iq3_s", "iq2_s",      "iq4_xs",     "i8",         "i16",           "i32",           "i64",
    "f64",   "iq1_m",      "bf16",       "q4_0_4_4",   "q4_0_4_8",      "q4_0_8_8",      "tq1_0",
    "tq2_0", "iq4_nl_4_4", "iq4_nl_4_8", "iq4_nl_8_8", "mxfp4"};

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

double tensor_type_bits_per_weight(TensorType type) {
  const TensorTypeTraits& t = tensor_type_traits(type);
  return 8.0 * static_cast<double>(t.block_bytes) / static_cast<double>(t.block_values);
}

const TensorType* supported_tensor_types(size_t* count) {
  *count = kSupportedIds.size();
  return kSupportedIds.data();
}

std::string supported_tensor_type_list() {
  std::string list;
  for (const auto& t : kSupported)
    list += (list.empty() ? "" : ", ") + std::string(t.name);
  return list;
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
                          "'; supported: " + supported_tensor_type_list());
}

Result<size_t> tensor_bytes(TensorType type, int64_t n_values) {
  const auto& t = tensor_type_traits(type);
  if (n_values < 0 || n_values % t.block_values != 0)
    return invalid_argument(std::to_string(n_values) + " values are not a whole number of " +
                            t.name + " blocks of " + std::to_string(t.block_values));
  return static_cast<size_t>(n_values / t.block_values) * t.block_bytes;
}

} // namespace pshard
