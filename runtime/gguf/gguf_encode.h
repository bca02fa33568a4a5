// Private to runtime/gguf: serialising GGUF header pieces for the writer.
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_value.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace pshard::gguf::detail {

class ByteSink {
public:
  template <typename T> void put(T value) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
  }
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void pad_to(uint64_t size) { bytes_.resize(size, 0); }
  uint64_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

private:
  std::vector<uint8_t> bytes_;
};

// Appends a value's encoding (without its type id). Fails, naming `key`, on an
// array whose items do not all have its element type or that nests too deep,
// since the reader would refuse the file.
Status encode_value(const Value& value, std::string_view key, ByteSink& out);

} // namespace pshard::gguf::detail
