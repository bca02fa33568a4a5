// Reading GGUF files (versions 2 and 3), strictly validated.
//
// Byte layout (all integers little-endian):
//
//   offset 0   +--------------------------------------------+
//              | magic "GGUF" (4 bytes)                     |
//              | version            u32  (2 or 3)           |
//              | tensor_count       u64                     |
//              | metadata_kv_count  u64                     |
//              +--------------------------------------------+
//              | metadata_kv_count x key/value:             |
//              |   key   : string                           |
//              |   type  : u32 (ValueType)                  |
//              |   value : scalar | string | array          |
//              |     string = u64 length, bytes (no NUL)    |
//              |     array  = u32 element type, u64 count,  |
//              |              count x value (nested ok)     |
//              +--------------------------------------------+
//              | tensor_count x tensor info:                |
//              |   name    : string                         |
//              |   n_dims  : u32 (1..4)                     |
//              |   dims    : n_dims x u64 (dims[0] = row)   |
//              |   type    : u32 (ggml type id)             |
//              |   offset  : u64, from the data section,    |
//              |             a multiple of the alignment    |
//              +--------------------------------------------+
//              | zero padding to `general.alignment`        |
//              | (u32 metadata, default 32)                 |
//   data_offset+--------------------------------------------+
//              | tensor data, each at data_offset + offset  |
//              +--------------------------------------------+
//
// Split models (llama.cpp's gguf-split): NAME-00001-of-00003.gguf, NAME-00002-of-00003.gguf,
// ... are each a complete GGUF file laid out as above. Every shard carries `split.no`
// (u16, 0-based), `split.count` (u16) and `split.tensors.count` (i32, the model's total);
// the first shard also carries the model's metadata. open() on the first shard opens
// them all and shows one model: the first shard's metadata, the union of the tensors,
// each TensorInfo naming the shard that holds it (runtime/gguf/gguf_split.h).
//
// Usage:
//   PSHARD_ASSIGN_OR_RETURN(auto file, GgufFile::open("model.gguf"));  // or NAME-00001-of-0000N
//   PSHARD_ASSIGN_OR_RETURN(uint32_t n_layer, file->get_uint("llama.block_count"));
//   const TensorInfo* t = file->find_tensor("token_embd.weight");
//   const uint8_t* bytes = file->tensor_data(*t);   // in place, from its shard's mapping
//
// Every count, length, offset and size is checked against the file size and for
// overflow before use; errors name the field and its byte offset.
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_value.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pshard::gguf {

inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr int kMaxDims = 4;

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // dims[0] is the contiguous (row) dimension
  TensorType type = TensorType::kF32;
  uint64_t offset = 0;        // from the start of its shard's data section
  uint64_t n_bytes = 0;
  uint32_t shard = 0;         // the file of a split model holding it (its split.no); 0 unsplit
  int64_t n_values() const;
  int64_t row_length() const { return dims.empty() ? 0 : dims[0]; }
  int64_t n_rows() const;     // product of dims[1..]
};

// One file of a model: an unsplit model has one shard, a split model one per file.
struct GgufShard {
  std::string path;
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0; // where the file's data section starts
  uint64_t file_size = 0;
  // The file's own keys: the model's in the first shard, only split.* in the others.
  std::vector<KeyValue> metadata;
  size_t first_tensor = 0; // its tensors are tensors()[first_tensor, first_tensor + n_tensors)
  size_t n_tensors = 0;
  std::span<const uint8_t> bytes; // the whole file image; empty without data
};

enum class OpenMode {
  kMetadataOnly, // reads the header only; tensor data is never touched (fast on 100 GB files)
  kMapData,      // also memory-maps the whole file read-only so tensor_data() works
  kReadData,     // reads the whole file into anonymous memory (llama.cpp's --no-mmap): a
                 // copy in RAM, but on transparent huge pages where the kernel grants
                 // them — fewer TLB misses, so decode streams weights faster than from
                 // the page cache's 4 KiB pages
};

struct ParsedHeader; // gguf_parser.h

class GgufFile {
public:
  // Opens a GGUF file; given the first shard of a split model, opens every shard (in the
  // same mode) and checks they belong together. Given another shard, the error names the
  // first one.
  static Result<std::unique_ptr<GgufFile>> open(const std::string& path,
                                                OpenMode mode = OpenMode::kMapData);
  // Parses one whole file image held in memory (tests, fuzzing). The bytes must
  // outlive the GgufFile; tensor_data() points into them. Never looks for other shards.
  static Result<std::unique_ptr<GgufFile>> parse(std::span<const uint8_t> bytes);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  // Of the file opened (the first shard of a split model).
  const std::string& path() const { return shards_.front().path; }
  uint32_t version() const { return shards_.front().version; }
  uint64_t alignment() const { return shards_.front().alignment; }
  uint64_t data_offset() const { return shards_.front().data_offset; }
  uint64_t file_size() const { return shards_.front().file_size; }

  // Every file of the model, in split.no order; one for an unsplit model.
  const std::vector<GgufShard>& shards() const { return shards_; }
  bool is_split() const { return shards_.size() > 1; }
  // The bytes of all shards together.
  uint64_t total_file_size() const;

  // The model's metadata (a split model's first shard's).
  const std::vector<KeyValue>& metadata() const { return shards_.front().metadata; }
  const Value* find(std::string_view key) const;
  // llama.cpp's --override-kv for keys read straight from the metadata (the tokenizer's):
  // find() and the get_* readers see `value` for `key` from now on. In memory only: the
  // file, metadata() and so the model's fingerprint stay as they are.
  void override_value(const std::string& key, Value value) { overrides_[key] = std::move(value); }

  // Typed getters with errors naming the key and what was found instead.
  // get_uint/get_int accept any integer type whose value fits; get_float any
  // float or integer type.
  Result<uint64_t> get_uint(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<double> get_float(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  Result<const Array*> get_array(std::string_view key) const;
  // Arrays of numbers: integers only (any integer element type), or any numbers.
  Result<std::vector<int64_t>> get_int_array(std::string_view key) const;
  Result<std::vector<double>> get_float_array(std::string_view key) const;

  // Every tensor of the model, shard by shard.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // A tensor's absolute byte offset in its shard's file (shards()[tensor.shard]).
  uint64_t tensor_file_offset(const TensorInfo& tensor) const;

  // Whether tensor data is available (opened with kMapData/kReadData or parsed from memory).
  bool has_data() const { return !shards_.front().bytes.empty(); }
  // Start of a tensor's bytes inside its shard's image; nullptr without data.
  const uint8_t* tensor_data(const TensorInfo& tensor) const;
  // A tensor's bytes to change in place (LoRA adapters merged at load): its pages of the
  // file's own mapping made writable — copy-on-write for a mapped file, which stays as it
  // is on disk. kInvalidArgument for a file without its own mapping (parsed from memory,
  // or opened without data).
  Result<uint8_t*> writable_tensor_data(const TensorInfo& tensor);
  // The first shard's whole image (the whole model when unsplit; empty without data).
  std::span<const uint8_t> mapped_bytes() const { return shards_.front().bytes; }

private:
  GgufFile() = default;

  // Reads one file's header (and data, by mode) and appends it as the next shard.
  Status add_shard_file(const std::string& path, OpenMode mode);
  // Appends a parsed shard: its tensors join the union (a name twice is an error).
  Status add_shard(ParsedHeader header, std::string path, uint64_t file_size,
                   std::span<const uint8_t> bytes);
  // After the first shard: when it is part of a split model, opens and checks the
  // others (gguf_split.cpp).
  Status add_sibling_shards(OpenMode mode);

  std::vector<GgufShard> shards_;
  std::unordered_map<std::string, size_t> metadata_index_; // into the first shard's metadata
  std::unordered_map<std::string, Value> overrides_;       // override_value(): before the file's
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
  std::vector<std::pair<void*, size_t>> mappings_; // owned mmaps, unmapped in the destructor
};

} // namespace pshard::gguf
