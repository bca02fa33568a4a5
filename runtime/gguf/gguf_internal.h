// Private to runtime/gguf: facts about the encoding shared by the reader and the
// writer, so both sides agree on limits and sizes.
#pragma once

#include "runtime/gguf/gguf_value.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace pshard::gguf::detail {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kWriteVersion = 3;
inline constexpr const char* kAlignmentKey = "general.alignment";

// Arrays of arrays deeper than this are refused: real files nest at most once,
// and the limit bounds the parser's recursion on hostile input.
inline constexpr int kMaxArrayDepth = 8;

// A header this large is not a model; refusing it bounds what a hostile file
// (e.g. a sparse 100 GB file claiming a 50 GB array) can make us read and allocate.
inline constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 30;

// Every parsed value costs a Value (40 bytes) however small its encoding, so a
// header of a billion uint8s would need 40 GB. The largest real vocabularies
// hold about 1.5 million values (tokens, scores, types, merges).
inline constexpr uint64_t kMaxMetadataValues = uint64_t{1} << 24;

inline bool is_valid_value_type(uint32_t id) {
  return id <= static_cast<uint32_t>(ValueType::kFloat64);
}

// Encoded size of a scalar; 0 for strings and arrays (variable length).
uint64_t scalar_size(ValueType type);

// The fewest bytes one value of `type` can occupy: lets a count be checked
// against the bytes left before anything is allocated for it.
uint64_t min_encoded_size(ValueType type);

// "int32 -3", "string 'llama'", "array of 12 float32" — for error messages.
std::string describe_value(const Value& value);

// Quotes a key or name for a message: escapes non-printable bytes (keys may hold
// invalid UTF-8) and shortens very long ones.
std::string quoted(std::string_view text);

inline bool is_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Rounds up to a multiple of a power-of-two alignment; false on overflow.
inline bool align_up(uint64_t value, uint64_t alignment, uint64_t& out) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(value, alignment - 1, &sum))
    return false;
  out = sum & ~(alignment - 1);
  return true;
}

} // namespace pshard::gguf::detail
