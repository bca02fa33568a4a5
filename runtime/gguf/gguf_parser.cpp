// The GGUF header parser: preamble and metadata. Tensor infos and the data
// layout are in gguf_tensor_infos.cpp. The byte layout is drawn in gguf_file.h.
#include "runtime/gguf/gguf_parser.h"

#include "runtime/gguf/gguf_internal.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

namespace pshard::gguf {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader copies little-endian fields as they are");

using detail::quoted;

// Clamping the buffer makes the header size limit hold for whole-file images too
// (mappings, parse()): a read past it takes need_slow(), which refuses it.
GgufParser::GgufParser(std::span<const uint8_t> prefix, uint64_t file_size)
    : buf_(prefix.first(std::min<uint64_t>(prefix.size(), detail::kMaxHeaderBytes))),
      file_size_(file_size) {}

Status GgufParser::fail(const std::string& problem) const {
  return invalid_format(where_ + ": " + problem);
}

Status GgufParser::fail_unsupported(const std::string& problem) const {
  return unsupported(where_ + ": " + problem);
}

// The messages are built only on failure: this runs for every value of every
// array, and real vocabularies hold hundreds of thousands of strings.
Status GgufParser::need(uint64_t n, std::string_view what) {
  // pos_ <= buf_.size() <= file_size_ always holds, so the subtraction is safe.
  if (n <= buf_.size() - pos_) [[likely]]
    return Status::ok_status();
  return need_slow(n, std::string(what));
}

Status GgufParser::need_slow(uint64_t n, const std::string& what) {
  if (n > file_size_ - pos_)
    return fail(what + " needs " + std::to_string(n) + " bytes from byte " + std::to_string(pos_) +
                ", past the end of the file (" + std::to_string(file_size_) + " bytes)");
  if (pos_ + n > detail::kMaxHeaderBytes)
    return fail_unsupported(what + " needs " + std::to_string(n) + " bytes from byte " +
                            std::to_string(pos_) + ", making the header longer than " +
                            std::to_string(detail::kMaxHeaderBytes) +
                            " bytes, which pshard refuses");
  needed_ = pos_ + n;
  return internal_error("the GGUF header continues past the " + std::to_string(buf_.size()) +
                        " bytes read");
}

Status GgufParser::need_items(uint64_t count, uint64_t min_size, std::string_view what,
                              uint64_t count_offset) {
  uint64_t total = 0;
  const bool overflow = __builtin_mul_overflow(count, min_size, &total);
  if (!overflow && total <= buf_.size() - pos_) [[likely]]
    return Status::ok_status();
  const std::string field = std::string(what) + " " + std::to_string(count) + " (at byte " +
                            std::to_string(count_offset) + ")";
  if (overflow)
    return fail(field + " is impossibly large");
  return need_slow(total, field);
}

template <typename T> Status GgufParser::read(T& out, std::string_view what) {
  PSHARD_RETURN_IF_ERROR(need(sizeof(T), what));
  std::memcpy(&out, buf_.data() + pos_, sizeof(T));
  pos_ += sizeof(T);
  return Status::ok_status();
}

Status GgufParser::read_string(std::string& out, std::string_view what) {
  uint64_t length = 0;
  if (sizeof(length) > buf_.size() - pos_)
    PSHARD_RETURN_IF_ERROR(need_slow(sizeof(length), std::string(what) + " length"));
  std::memcpy(&length, buf_.data() + pos_, sizeof(length));
  pos_ += sizeof(length);
  if (length > buf_.size() - pos_)
    PSHARD_RETURN_IF_ERROR(
        need_slow(length, std::string(what) + " of length " + std::to_string(length)));
  out.assign(reinterpret_cast<const char*>(buf_.data() + pos_), length);
  pos_ += length;
  return Status::ok_status();
}

Status GgufParser::parse_into(ParsedHeader& out) {
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  PSHARD_RETURN_IF_ERROR(parse_preamble(out, n_tensors, n_kv));
  PSHARD_RETURN_IF_ERROR(parse_metadata(out, n_kv));
  PSHARD_RETURN_IF_ERROR(read_alignment(out));
  PSHARD_RETURN_IF_ERROR(parse_tensor_infos(out, n_tensors));
  return check_tensor_layout(out);
}

Status GgufParser::parse_preamble(ParsedHeader& out, uint64_t& n_tensors, uint64_t& n_kv) {
  set_where("header");
  if (file_size_ == 0)
    return fail("the file is empty, not a GGUF file");
  char magic[4] = {};
  PSHARD_RETURN_IF_ERROR(read(magic, "magic"));
  if (std::memcmp(magic, detail::kMagic, sizeof(magic)) != 0)
    return fail("not a GGUF file: the first 4 bytes are " +
                quoted(std::string_view(magic, sizeof(magic))) + ", expected 'GGUF'");

  uint32_t version = 0;
  PSHARD_RETURN_IF_ERROR(read(version, "version"));
  const uint32_t swapped = __builtin_bswap32(version);
  if (version != 2 && version != 3) {
    if (swapped >= 1 && swapped <= 3)
      return fail_unsupported("the version field reads " + std::to_string(version) +
                              ", which is version " + std::to_string(swapped) +
                              " byte-swapped: a big-endian GGUF file; pshard reads "
                              "little-endian files only");
    if (version == 1)
      return fail_unsupported("GGUF version 1 (32-bit counts) is not supported; pshard reads "
                              "versions 2 and 3 (re-convert the model with current tools)");
    return fail_unsupported("GGUF version " + std::to_string(version) +
                            " is not supported; pshard reads versions 2 and 3");
  }
  out.shard.version = version;

  PSHARD_RETURN_IF_ERROR(read(n_tensors, "tensor_count"));
  PSHARD_RETURN_IF_ERROR(read(n_kv, "metadata_kv_count"));
  // Lower bounds on what the counts need, so a hostile count fails here.
  PSHARD_RETURN_IF_ERROR(need_items(n_kv, 8 + 4 + detail::min_encoded_size(ValueType::kUint8),
                                    "metadata_kv_count", 16));
  constexpr uint64_t kMinTensorInfo = 8 + 4 + 8 + 4 + 8; // empty name, 1 dim
  return need_items(n_tensors, kMinTensorInfo, "tensor_count", 8);
}

Status GgufParser::parse_metadata(ParsedHeader& out, uint64_t n_kv) {
  // need_items() above bounds n_kv by the bytes in the buffer.
  std::vector<KeyValue>& metadata = out.shard.metadata;
  metadata.reserve(n_kv);
  std::vector<uint64_t> key_offsets;
  key_offsets.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t key_offset = pos_;
    set_where("metadata key #" + std::to_string(i) + " (at byte " + std::to_string(key_offset) +
              ")");
    KeyValue kv;
    PSHARD_RETURN_IF_ERROR(read_string(kv.key, "key"));
    set_where("metadata " + quoted(kv.key) + " (at byte " + std::to_string(key_offset) + ")");
    auto [it, inserted] = out.metadata_index.emplace(kv.key, metadata.size());
    if (!inserted)
      return fail("duplicate key; it was first defined at byte " +
                  std::to_string(key_offsets[it->second]));

    uint32_t type_id = 0;
    PSHARD_RETURN_IF_ERROR(read(type_id, "value type"));
    if (!detail::is_valid_value_type(type_id))
      return fail("unknown value type " + std::to_string(type_id) + " at byte " +
                  std::to_string(pos_ - 4));
    PSHARD_RETURN_IF_ERROR(parse_value(static_cast<ValueType>(type_id), 0, kv.value));
    metadata.push_back(std::move(kv));
    key_offsets.push_back(key_offset);
  }
  return Status::ok_status();
}

Status GgufParser::parse_value(ValueType type, int depth, Value& out) {
  switch (type) {
  case ValueType::kUint8: return read(out.v.emplace<uint8_t>(), "uint8 value");
  case ValueType::kInt8: return read(out.v.emplace<int8_t>(), "int8 value");
  case ValueType::kUint16: return read(out.v.emplace<uint16_t>(), "uint16 value");
  case ValueType::kInt16: return read(out.v.emplace<int16_t>(), "int16 value");
  case ValueType::kUint32: return read(out.v.emplace<uint32_t>(), "uint32 value");
  case ValueType::kInt32: return read(out.v.emplace<int32_t>(), "int32 value");
  case ValueType::kFloat32: return read(out.v.emplace<float>(), "float32 value");
  case ValueType::kUint64: return read(out.v.emplace<uint64_t>(), "uint64 value");
  case ValueType::kInt64: return read(out.v.emplace<int64_t>(), "int64 value");
  case ValueType::kFloat64: return read(out.v.emplace<double>(), "float64 value");
  case ValueType::kBool: {
    uint8_t byte = 0;
    PSHARD_RETURN_IF_ERROR(read(byte, "bool value"));
    if (byte > 1)
      return fail("bool value at byte " + std::to_string(pos_ - 1) + " is " + std::to_string(byte) +
                  ", expected 0 or 1");
    out.v = byte == 1;
    return Status::ok_status();
  }
  case ValueType::kString: return read_string(out.v.emplace<std::string>(), "string");
  case ValueType::kArray: return parse_array(depth + 1, out);
  }
  return fail("unknown value type " + std::to_string(static_cast<uint32_t>(type)));
}

Status GgufParser::parse_array(int depth, Value& out) {
  const uint64_t array_offset = pos_;
  if (depth > detail::kMaxArrayDepth)
    return fail("array at byte " + std::to_string(array_offset) + " is nested deeper than " +
                std::to_string(detail::kMaxArrayDepth) + " levels");
  uint32_t element_id = 0;
  PSHARD_RETURN_IF_ERROR(read(element_id, "array element type"));
  if (!detail::is_valid_value_type(element_id))
    return fail("array at byte " + std::to_string(array_offset) + " has unknown element type " +
                std::to_string(element_id));
  const auto element_type = static_cast<ValueType>(element_id);
  uint64_t count = 0;
  PSHARD_RETURN_IF_ERROR(read(count, "array count"));
  PSHARD_RETURN_IF_ERROR(need_items(count, detail::min_encoded_size(element_type),
                                    "array element count", pos_ - sizeof(count)));

  n_values_ += count; // no overflow: need_items bounded count by the buffer
  if (n_values_ > detail::kMaxMetadataValues)
    return fail_unsupported("array at byte " + std::to_string(array_offset) +
                            " brings the header to " + std::to_string(n_values_) +
                            " values, more than pshard's limit of " +
                            std::to_string(detail::kMaxMetadataValues));

  Array& array = out.v.emplace<Array>();
  array.element_type = element_type;
  // The count is bounded by the buffered bytes, but a Value is larger than most
  // elements, so a truncated array must not reserve without limit: up to 2^20 items
  // (40 MiB), which holds every real vocabulary (the largest are ~262K tokens) in one
  // allocation. Growing by reallocation instead moved each Value (a variant) about twice.
  array.items.reserve(std::min<uint64_t>(count, uint64_t{1} << 20));
  for (uint64_t i = 0; i < count; ++i) {
    Value& item = array.items.emplace_back();
    PSHARD_RETURN_IF_ERROR(parse_value(element_type, depth, item));
  }
  return Status::ok_status();
}

Status GgufParser::read_alignment(ParsedHeader& out) {
  out.shard.alignment = kDefaultAlignment;
  auto it = out.metadata_index.find(detail::kAlignmentKey);
  if (it == out.metadata_index.end())
    return Status::ok_status();
  const Value& value = out.shard.metadata[it->second].value;
  const auto* alignment = std::get_if<uint32_t>(&value.v);
  if (alignment == nullptr || !detail::is_power_of_two(*alignment))
    return invalid_format(std::string("metadata '") + detail::kAlignmentKey + "' is " +
                          detail::describe_value(value) + ", expected a uint32 power of two");
  out.shard.alignment = *alignment;
  return Status::ok_status();
}

} // namespace pshard::gguf
