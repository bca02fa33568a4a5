// GGUF metadata values: a variant whose index equals the GGUF value type id,
// so the on-disk type of every value is preserved (nested arrays included).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace pshard::gguf {

enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

const char* value_type_name(ValueType type);

struct Value;

// An array's elements all have `element_type`; an array of arrays holds Values
// whose own arrays may differ in element type, as GGUF allows.
struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

struct Value {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, Array, uint64_t, int64_t, double>;
  Storage v;

  ValueType type() const { return static_cast<ValueType>(v.index()); }
};

struct KeyValue {
  std::string key;
  Value value;
};

} // namespace pshard::gguf
