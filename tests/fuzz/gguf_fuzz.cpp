// libFuzzer target for the GGUF reader: any input must parse or fail cleanly,
// and whatever parses must keep the reader's promises (tensors inside the image,
// lookups consistent). A broken promise traps, so the fuzzer reports it.
#include "runtime/gguf/gguf_file.h"

#include <cstddef>
#include <cstdint>

namespace {

using pshard::gguf::Array;
using pshard::gguf::GgufFile;
using pshard::gguf::Value;

void check(bool promise) {
  if (!promise)
    __builtin_trap();
}

size_t count_values(const Value& value) {
  size_t n = 1;
  if (const auto* array = std::get_if<Array>(&value.v))
    for (const Value& item : array->items) {
      check(item.type() == array->element_type);
      n += count_values(item);
    }
  return n;
}

void touch_metadata(const GgufFile& file) {
  for (const auto& kv : file.metadata()) {
    check(file.find(kv.key) == &kv.value);
    count_values(kv.value);
    // Every getter either succeeds or fails with a message; none may crash.
    check(file.get_uint(kv.key).ok() || !file.get_uint(kv.key).status().message().empty());
    (void)file.get_int(kv.key);
    (void)file.get_float(kv.key);
    (void)file.get_bool(kv.key);
    (void)file.get_string(kv.key);
    (void)file.get_array(kv.key);
  }
}

void touch_tensors(const GgufFile& file) {
  const auto image = file.mapped_bytes();
  check(file.data_offset() % file.alignment() == 0);
  volatile uint8_t sink = 0;
  for (const auto& t : file.tensors()) {
    check(file.find_tensor(t.name) == &t);
    check(!t.dims.empty() && t.dims.size() <= 4 && t.n_values() > 0);
    const uint8_t* data = file.tensor_data(t);
    check(data >= image.data() + file.data_offset());
    check(t.n_bytes <= static_cast<uint64_t>(image.data() + image.size() - data));
    sink = sink + data[0] + data[t.n_bytes - 1];
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = GgufFile::parse(std::span<const uint8_t>(data, size));
  if (!file.ok()) {
    check(!file.status().message().empty());
    return 0;
  }
  touch_metadata(**file);
  touch_tensors(**file);
  return 0;
}
