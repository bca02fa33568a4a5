// GgufWriter::copy_of: a writer that re-writes an open model — re-split, merged into
// one file, or with changed metadata — reading each tensor's bytes from the model as
// it is written, so nothing is held in memory but one tensor at a time.
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_split.h"
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <cstring>

namespace pshard::gguf {

Result<GgufWriter> GgufWriter::copy_of(const GgufFile& file) {
  if (!file.has_data())
    return invalid_argument("'" + file.path() +
                            "' was opened without its data; open it with kMapData to copy it");
  GgufWriter w;
  for (const KeyValue& kv : file.metadata())
    if (!is_split_key(kv.key))
      w.set(kv.key, kv.value);
  for (const TensorInfo& t : file.tensors()) {
    const uint8_t* src = file.tensor_data(t);
    const uint64_t n = t.n_bytes;
    PSHARD_RETURN_IF_ERROR(w.add_tensor(t.name, t.type, t.dims, [src, n](std::span<uint8_t> out) {
      std::memcpy(out.data(), src, std::min<uint64_t>(n, out.size()));
      return Status::ok_status();
    }));
  }
  return w;
}

} // namespace pshard::gguf
