#include "runtime/gguf/gguf_value.h"

#include "runtime/gguf/gguf_internal.h"

#include <cstdio>
#include <type_traits>

namespace pshard::gguf {

const char* value_type_name(ValueType type) {
  switch (type) {
  case ValueType::kUint8: return "uint8";
  case ValueType::kInt8: return "int8";
  case ValueType::kUint16: return "uint16";
  case ValueType::kInt16: return "int16";
  case ValueType::kUint32: return "uint32";
  case ValueType::kInt32: return "int32";
  case ValueType::kFloat32: return "float32";
  case ValueType::kBool: return "bool";
  case ValueType::kString: return "string";
  case ValueType::kArray: return "array";
  case ValueType::kUint64: return "uint64";
  case ValueType::kInt64: return "int64";
  case ValueType::kFloat64: return "float64";
  }
  return "unknown value type";
}

namespace detail {

uint64_t scalar_size(ValueType type) {
  switch (type) {
  case ValueType::kUint8:
  case ValueType::kInt8:
  case ValueType::kBool: return 1;
  case ValueType::kUint16:
  case ValueType::kInt16: return 2;
  case ValueType::kUint32:
  case ValueType::kInt32:
  case ValueType::kFloat32: return 4;
  case ValueType::kUint64:
  case ValueType::kInt64:
  case ValueType::kFloat64: return 8;
  case ValueType::kString:
  case ValueType::kArray: return 0;
  }
  return 0;
}

uint64_t min_encoded_size(ValueType type) {
  if (type == ValueType::kString)
    return 8; // the length, for an empty string
  if (type == ValueType::kArray)
    return 12; // element type and count, for an empty array
  return scalar_size(type);
}

std::string quoted(std::string_view text) {
  constexpr size_t kMaxShown = 96;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (text.size() > kMaxShown)
    out += "...";
  out += "'";
  return out;
}

std::string describe_value(const Value& value) {
  std::string out = value_type_name(value.type());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out += " " + quoted(v);
        } else if constexpr (std::is_same_v<T, Array>) {
          out =
              "array of " + std::to_string(v.items.size()) + " " + value_type_name(v.element_type);
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? " true" : " false";
        } else if constexpr (std::is_floating_point_v<T>) {
          char buf[32];
          std::snprintf(buf, sizeof(buf), " %g", static_cast<double>(v));
          out += buf;
        } else {
          out += " " + std::to_string(v);
        }
      },
      value.v);
  return out;
}

} // namespace detail
} // namespace pshard::gguf
