#include "runtime/gguf/gguf_encode.h"

#include "runtime/gguf/gguf_internal.h"

#include <bit>
#include <type_traits>

namespace pshard::gguf::detail {

static_assert(std::endian::native == std::endian::little,
              "the GGUF writer stores fields in host byte order");

namespace {

Status encode_at_depth(const Value& value, std::string_view key, int depth, ByteSink& out);

Status encode_array(const Array& array, std::string_view key, int depth, ByteSink& out) {
  if (depth > kMaxArrayDepth)
    return invalid_argument("metadata " + quoted(key) + ": arrays nest deeper than " +
                            std::to_string(kMaxArrayDepth) + " levels");
  out.put<uint32_t>(static_cast<uint32_t>(array.element_type));
  out.put<uint64_t>(array.items.size());
  for (size_t i = 0; i < array.items.size(); ++i) {
    const Value& item = array.items[i];
    if (item.type() != array.element_type)
      return invalid_argument("metadata " + quoted(key) + ": array item " + std::to_string(i) +
                              " is " + value_type_name(item.type()) + " in an array of " +
                              value_type_name(array.element_type));
    PSHARD_RETURN_IF_ERROR(encode_at_depth(item, key, depth, out));
  }
  return Status::ok_status();
}

Status encode_at_depth(const Value& value, std::string_view key, int depth, ByteSink& out) {
  Status status;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          out.put_string(v);
        else if constexpr (std::is_same_v<T, Array>)
          status = encode_array(v, key, depth + 1, out);
        else if constexpr (std::is_same_v<T, bool>)
          out.put<uint8_t>(v ? 1 : 0);
        else
          out.put<T>(v);
      },
      value.v);
  return status;
}

} // namespace

Status encode_value(const Value& value, std::string_view key, ByteSink& out) {
  return encode_at_depth(value, key, 0, out);
}

} // namespace pshard::gguf::detail
