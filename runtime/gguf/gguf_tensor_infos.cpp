// The GGUF header parser, second half: tensor infos, and the checks that every
// tensor's bytes lie aligned, inside the file and apart from the others.
#include "runtime/gguf/gguf_internal.h"
#include "runtime/gguf/gguf_parser.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace pshard::gguf {

using detail::quoted;

namespace {

bool is_known_ggml_type(uint32_t id) { return ggml_type_name(id).rfind("unknown", 0) != 0; }

} // namespace

Status GgufParser::parse_tensor_infos(ParsedHeader& out, uint64_t n_tensors) {
  // parse_preamble bounded n_tensors by the bytes left.
  out.tensors.reserve(n_tensors);
  std::unordered_map<std::string, size_t> names;
  info_offsets_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const uint64_t info_offset = pos_;
    set_where("tensor #" + std::to_string(i) + " (info at byte " + std::to_string(info_offset) +
              ")");
    TensorInfo info;
    PSHARD_RETURN_IF_ERROR(read_string(info.name, "name"));
    set_where("tensor " + quoted(info.name) + " (info at byte " + std::to_string(info_offset) +
              ")");
    auto [it, inserted] = names.emplace(info.name, out.tensors.size());
    if (!inserted)
      return fail("duplicate tensor name; the first tensor of that name has its info at byte " +
                  std::to_string(info_offsets_[it->second]));
    PSHARD_RETURN_IF_ERROR(parse_tensor_info(info));
    out.tensors.push_back(std::move(info));
    info_offsets_.push_back(info_offset);
  }
  return Status::ok_status();
}

Status GgufParser::parse_tensor_info(TensorInfo& info) {
  uint32_t n_dims = 0;
  PSHARD_RETURN_IF_ERROR(read(n_dims, "n_dims"));
  if (n_dims < 1 || n_dims > static_cast<uint32_t>(kMaxDims))
    return fail("n_dims is " + std::to_string(n_dims) + ", expected 1 to " +
                std::to_string(kMaxDims));

  int64_t n_values = 1;
  info.dims.reserve(n_dims);
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t dim = 0;
    PSHARD_RETURN_IF_ERROR(read(dim, "dims"));
    const std::string field = "dims[" + std::to_string(d) + "]";
    if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(field + " is " + std::to_string(dim) +
                  "; every dimension must be at least 1 and below 2^63");
    if (__builtin_mul_overflow(n_values, static_cast<int64_t>(dim), &n_values))
      return fail(field + " = " + std::to_string(dim) +
                  " makes the number of values overflow 64 bits");
    info.dims.push_back(static_cast<int64_t>(dim));
  }

  uint32_t type_id = 0;
  PSHARD_RETURN_IF_ERROR(read(type_id, "type"));
  const TensorTypeTraits* traits = tensor_type_traits(type_id);
  if (traits == nullptr) {
    if (is_known_ggml_type(type_id))
      return fail_unsupported(
          "has type " + ggml_type_name(type_id) +
          ", which pshard does not support; supported: " + supported_tensor_type_list());
    return fail("type id " + std::to_string(type_id) + " at byte " + std::to_string(pos_ - 4) +
                " is not a ggml type");
  }
  info.type = traits->type;
  if (info.dims[0] % traits->block_values != 0)
    return fail("row length (dims[0]) " + std::to_string(info.dims[0]) + " is not a multiple of " +
                traits->name + "'s block of " + std::to_string(traits->block_values) + " values");
  const auto n_blocks = static_cast<uint64_t>(n_values / traits->block_values);
  if (__builtin_mul_overflow(n_blocks, static_cast<uint64_t>(traits->block_bytes), &info.n_bytes))
    return fail("its size in bytes overflows 64 bits");

  return read(info.offset, "data offset");
}

Status GgufParser::check_tensor_layout(ParsedHeader& out) {
  set_where("header");
  const uint64_t alignment = out.shard.alignment;
  uint64_t& data_offset = out.shard.data_offset;
  if (!detail::align_up(pos_, alignment, data_offset))
    return fail("the data section offset overflows");

  const std::vector<TensorInfo>& tensors = out.tensors;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorInfo& t = tensors[i];
    set_where("tensor " + quoted(t.name) + " (info at byte " + std::to_string(info_offsets_[i]) +
              ")");
    if (t.offset % alignment != 0)
      return fail("data offset " + std::to_string(t.offset) +
                  " is not a multiple of the alignment " + std::to_string(alignment));
    uint64_t start = 0;
    uint64_t end = 0;
    const bool overflow = __builtin_add_overflow(data_offset, t.offset, &start) ||
                          __builtin_add_overflow(start, t.n_bytes, &end);
    if (overflow || end > file_size_)
      return fail("data offset " + std::to_string(t.offset) + " (byte " +
                  (overflow ? std::string("overflowing") : std::to_string(start)) + ") + " +
                  std::to_string(t.n_bytes) + " bytes runs past the end of the file (" +
                  std::to_string(file_size_) + " bytes)");
  }

  // Overlaps: after sorting by offset each tensor must end before the next starts.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = tensors[order[k - 1]];
    const TensorInfo& cur = tensors[order[k]];
    // Both ends were checked against the file size above, so no overflow here.
    if (prev.offset + prev.n_bytes > cur.offset) {
      set_where("tensor " + quoted(cur.name) + " (info at byte " +
                std::to_string(info_offsets_[order[k]]) + ")");
      return fail("data [" + std::to_string(cur.offset) + ", " +
                  std::to_string(cur.offset + cur.n_bytes) + ") overlaps tensor " +
                  quoted(prev.name) + " at [" + std::to_string(prev.offset) + ", " +
                  std::to_string(prev.offset + prev.n_bytes) + ")");
    }
  }
  return Status::ok_status();
}

} // namespace pshard::gguf
