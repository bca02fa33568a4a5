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
// Usage:
//   PSHARD_ASSIGN_OR_RETURN(auto file, GgufFile::open("model.gguf"));
//   PSHARD_ASSIGN_OR_RETURN(uint32_t n_layer, file->get_uint("llama.block_count"));
//   const TensorInfo* t = file->find_tensor("token_embd.weight");
//   const uint8_t* bytes = file->tensor_data(*t);   // in place, from the mapping
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
#include <vector>

namespace pshard::gguf {

inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr int kMaxDims = 4;

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // dims[0] is the contiguous (row) dimension
  TensorType type = TensorType::kF32;
  uint64_t offset = 0;        // from the start of the data section
  uint64_t n_bytes = 0;
  int64_t n_values() const;
  int64_t row_length() const { return dims.empty() ? 0 : dims[0]; }
  int64_t n_rows() const;     // product of dims[1..]
};

enum class OpenMode {
  kMetadataOnly, // reads the header only; tensor data is never touched (fast on 100 GB files)
  kMapData,      // also memory-maps the whole file read-only so tensor_data() works
  kReadData,     // reads the whole file into anonymous memory (llama.cpp's --no-mmap): a
                 // copy in RAM, but on transparent huge pages where the kernel grants
                 // them — fewer TLB misses, so decode streams weights faster than from
                 // the page cache's 4 KiB pages
};

class GgufFile {
public:
  static Result<std::unique_ptr<GgufFile>> open(const std::string& path,
                                                OpenMode mode = OpenMode::kMapData);
  // Parses a whole file image held in memory (tests, fuzzing). The bytes must
  // outlive the GgufFile; tensor_data() points into them.
  static Result<std::unique_ptr<GgufFile>> parse(std::span<const uint8_t> bytes);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return file_size_; }

  const std::vector<KeyValue>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;

  // Typed getters with errors naming the key and what was found instead.
  // get_uint/get_int accept any integer type whose value fits; get_float any
  // float or integer type.
  Result<uint64_t> get_uint(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<double> get_float(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  Result<const Array*> get_array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

  // Whether tensor data is available (opened with kMapData or parsed from memory).
  bool has_data() const { return data_ != nullptr; }
  // Start of a tensor's bytes inside the mapping; nullptr without data.
  const uint8_t* tensor_data(const TensorInfo& tensor) const;
  // The whole mapped file (empty without data).
  std::span<const uint8_t> mapped_bytes() const;

private:
  GgufFile() = default;
  friend class GgufParser;

  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  uint64_t file_size_ = 0;
  std::vector<KeyValue> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
  const uint8_t* data_ = nullptr;  // whole-file image (mapping or caller's bytes)
  void* mapping_ = nullptr;        // owned mmap, unmapped in the destructor
  size_t mapping_size_ = 0;
};

} // namespace pshard::gguf
