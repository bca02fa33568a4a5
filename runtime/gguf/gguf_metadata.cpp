// Lookups on a parsed GGUF file: typed metadata getters and tensor infos.
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_internal.h"

#include <limits>
#include <type_traits>

namespace pshard::gguf {
namespace {

using detail::describe_value;
using detail::quoted;

Status wrong_type(std::string_view key, const Value& value, const char* expected) {
  return invalid_format("metadata " + quoted(key) + " is " + describe_value(value) + ", expected " +
                        expected);
}

Status missing(std::string_view key) {
  return not_found("metadata key " + quoted(key) + " not found");
}

} // namespace

int64_t TensorInfo::n_values() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

int64_t TensorInfo::n_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i)
    n *= dims[i];
  return n;
}

const Value* GgufFile::find(std::string_view key) const {
  if (!overrides_.empty())
    if (auto o = overrides_.find(std::string(key)); o != overrides_.end())
      return &o->second;
  auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata()[it->second].value;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<uint64_t> GgufFile::get_uint(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr)
    return missing(key);
  Result<uint64_t> result = wrong_type(key, *value, "an unsigned integer");
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if constexpr (std::is_signed_v<T>) {
            if (v >= 0)
              result = static_cast<uint64_t>(v);
          } else {
            result = static_cast<uint64_t>(v);
          }
        }
      },
      value->v);
  return result;
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr)
    return missing(key);
  Result<int64_t> result = wrong_type(key, *value, "an integer that fits int64");
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            result = static_cast<int64_t>(v);
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          result = static_cast<int64_t>(v);
        }
      },
      value->v);
  return result;
}

Result<double> GgufFile::get_float(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr)
    return missing(key);
  Result<double> result = wrong_type(key, *value, "a number");
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
          result = static_cast<double>(v);
      },
      value->v);
  return result;
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr)
    return missing(key);
  if (const auto* b = std::get_if<bool>(&value->v))
    return *b;
  return wrong_type(key, *value, "a bool");
}

Result<std::string> GgufFile::get_string(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr)
    return missing(key);
  if (const auto* s = std::get_if<std::string>(&value->v))
    return *s;
  return wrong_type(key, *value, "a string");
}

Result<const Array*> GgufFile::get_array(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr)
    return missing(key);
  if (const auto* a = std::get_if<Array>(&value->v))
    return a;
  return wrong_type(key, *value, "an array");
}

namespace {

// The elements of a numeric array as doubles (integers exactly up to 2^53), or an
// error naming the key and the element that is not a number.
Result<std::vector<double>> numeric_items(std::string_view key, const Array& a) {
  std::vector<double> out;
  out.reserve(a.items.size());
  for (size_t i = 0; i < a.items.size(); ++i) {
    bool ok = false;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            out.push_back(static_cast<double>(v));
            ok = true;
          }
        },
        a.items[i].v);
    if (!ok)
      return invalid_format("metadata " + quoted(key) + " element " + std::to_string(i) + " is " +
                            describe_value(a.items[i]) + ", expected a number");
  }
  return out;
}

} // namespace

Result<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
  PSHARD_ASSIGN_OR_RETURN(const Array* a, get_array(key));
  if (a->element_type == ValueType::kFloat32 || a->element_type == ValueType::kFloat64)
    return invalid_format("metadata " + quoted(key) + " is an array of floats, expected integers");
  PSHARD_ASSIGN_OR_RETURN(std::vector<double> items, numeric_items(key, *a));
  return std::vector<int64_t>(items.begin(), items.end());
}

Result<std::vector<double>> GgufFile::get_float_array(std::string_view key) const {
  PSHARD_ASSIGN_OR_RETURN(const Array* a, get_array(key));
  return numeric_items(key, *a);
}

} // namespace pshard::gguf
