// Private to runtime/gguf: parses a GGUF header from the first bytes of a file.
//
// The parser is given a buffer holding the file's first bytes and the size of the
// whole file. Reads past the buffer but inside the file are not errors: the parse
// fails with needs_more() set and the caller retries with a longer prefix
// (metadata-only opens read only the header, never the tensor data). Reads past
// the end of the file are format errors naming the field and its byte offset.
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pshard::gguf {

// One file's header as parsed: the shard's version, alignment, data offset and
// metadata (its path, size and bytes are the opener's to fill) and its tensor infos.
struct ParsedHeader {
  GgufShard shard;
  std::unordered_map<std::string, size_t> metadata_index;
  std::vector<TensorInfo> tensors; // shard indices left 0: the opener sets them
};

class GgufParser {
public:
  GgufParser(std::span<const uint8_t> prefix, uint64_t file_size);

  // Fills `out` from the header.
  Status parse_into(ParsedHeader& out);

  // After a failed parse_into: whether the header continues past the prefix, and
  // how long a prefix the next attempt needs at least.
  bool needs_more() const { return needed_ > 0; }
  uint64_t bytes_needed() const { return needed_; }

private:
  Status parse_preamble(ParsedHeader& out, uint64_t& n_tensors, uint64_t& n_kv);
  Status parse_metadata(ParsedHeader& out, uint64_t n_kv);
  Status parse_value(ValueType type, int depth, Value& out);
  Status parse_array(int depth, Value& out);
  Status read_alignment(ParsedHeader& out);
  Status parse_tensor_infos(ParsedHeader& out, uint64_t n_tensors);
  Status parse_tensor_info(TensorInfo& info);
  Status check_tensor_layout(ParsedHeader& out);

  // Ensures `n` more bytes are readable at the cursor; `what` names them.
  Status need(uint64_t n, std::string_view what);
  Status need_slow(uint64_t n, const std::string& what);
  // Ensures `count` items of at least `min_size` bytes each can follow; the
  // count itself was read at `count_offset`.
  Status need_items(uint64_t count, uint64_t min_size, std::string_view what,
                    uint64_t count_offset);
  template <typename T> Status read(T& out, std::string_view what);
  Status read_string(std::string& out, std::string_view what);
  // A format error prefixed with where the parser is ("tensor 'x' (info at byte 88)").
  Status fail(const std::string& problem) const;
  Status fail_unsupported(const std::string& problem) const;
  void set_where(std::string where) { where_ = std::move(where); }

  std::span<const uint8_t> buf_;
  uint64_t file_size_;
  uint64_t pos_ = 0;
  uint64_t needed_ = 0;
  uint64_t n_values_ = 0; // metadata values parsed so far, array elements included
  std::string where_ = "header";
  std::vector<uint64_t> info_offsets_; // byte offset of each tensor info, for messages
};

} // namespace pshard::gguf
