// Writing GGUF version 3 files: metadata in insertion order, tensors aligned to
// `general.alignment` (32 unless set). Data is produced tensor by tensor through a
// callback so multi-gigabyte models are never held in memory, and a sparse mode
// leaves the data section as a file hole (shapes of a 235B model without the disk).
// The file is written under a temporary name and renamed into place on success.
//
//   GgufWriter w;
//   w.set("general.architecture", gguf::Value{std::string("llama")});
//   w.add_tensor("token_embd.weight", TensorType::kF16, {n_embd, n_vocab},
//                [&](std::span<uint8_t> out) { fill(out); return Status::ok_status(); });
//   PSHARD_RETURN_IF_ERROR(w.write("model.gguf"));
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_value.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace pshard::gguf {

class GgufWriter {
public:
  using FillFn = std::function<Status(std::span<uint8_t> out)>;

  // Sets (or replaces, keeping its position) a metadata key.
  void set(const std::string& key, Value value);
  // Adds a tensor; `fill` writes exactly its bytes when the file is written.
  Status add_tensor(const std::string& name, TensorType type, std::vector<int64_t> dims,
                    FillFn fill);

  struct WriteOptions {
    bool sparse = false; // headers only; the data section is left as a hole
  };
  Status write(const std::string& path, WriteOptions options) const;
  Status write(const std::string& path) const { return write(path, WriteOptions{}); }

private:
  struct PendingTensor {
    std::string name;
    TensorType type;
    std::vector<int64_t> dims;
    uint64_t n_bytes;
    FillFn fill;
  };
  std::vector<KeyValue> metadata_;
  std::vector<PendingTensor> tensors_;
};

} // namespace pshard::gguf
