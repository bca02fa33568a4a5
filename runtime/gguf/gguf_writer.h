// Writing GGUF version 3 files: metadata in insertion order, tensors aligned to
// `general.alignment` (32 unless set). Data is produced tensor by tensor through a
// callback so multi-gigabyte models are never held in memory, and a sparse mode
// leaves the data section as a file hole (shapes of a 235B model without the disk).
// The file is written under a temporary name and renamed into place on success.
// split_max_tensors writes a split model instead (llama.cpp's gguf-split layout).
//
//   GgufWriter w;
//   w.set("general.architecture", gguf::Value{std::string("llama")});
//   w.add_tensor("token_embd.weight", TensorType::kF16, {n_embd, n_vocab},
//                [&](std::span<uint8_t> out) { fill(out); return Status::ok_status(); });
//   PSHARD_RETURN_IF_ERROR(w.write("model.gguf"));
//   PSHARD_RETURN_IF_ERROR(w.write("model.gguf", {.split_max_tensors = 100}));
//       // model-00001-of-00003.gguf, model-00002-of-00003.gguf, model-00003-of-00003.gguf
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_value.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace pshard {
class TempFile;
}

namespace pshard::gguf {

class GgufFile;

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
    // > 0: split the model as llama.cpp's gguf-split does, at most this many tensors a
    // file, into PATH-00001-of-0000N.gguf ... (PATH without its .gguf; gguf_split.h).
    // The first shard carries the metadata, every shard the split.* keys.
    uint32_t split_max_tensors = 0;
  };
  // Any split.* keys set are dropped: a split write adds its own.
  Status write(const std::string& path, WriteOptions options) const;
  Status write(const std::string& path) const { return write(path, WriteOptions{}); }
  // The files write() makes: `path` itself, or the shards' names.
  std::vector<std::string> output_paths(const std::string& path, const WriteOptions& options) const;

  // A writer holding a copy of `file`'s metadata (split keys dropped) and tensors, their
  // bytes read from `file` when written: re-splitting, merging, re-writing with changed
  // metadata. `file` must have data and outlive the writer's write().
  static Result<GgufWriter> copy_of(const GgufFile& file);

private:
  Status write_file(TempFile& file, const std::vector<KeyValue>& metadata, size_t begin,
                    size_t end, uint64_t alignment, bool sparse) const;

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
