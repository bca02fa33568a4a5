// Writing GGUF v3 files (layout drawn in gguf_file.h), whole or split in shards
// (gguf_split.h). The header is built in memory; tensor data is produced one tensor
// at a time, so at most one tensor's bytes are ever held. Files appear under their
// names only once all are complete.
#include "runtime/gguf/gguf_writer.h"

#include "runtime/gguf/gguf_encode.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_internal.h"
#include "runtime/gguf/gguf_split.h"
#include "runtime/core/temp_file.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>

namespace pshard::gguf {
namespace {

using detail::quoted;

Result<uint64_t> alignment_of(const std::vector<KeyValue>& metadata) {
  for (const KeyValue& kv : metadata) {
    if (kv.key != detail::kAlignmentKey)
      continue;
    const auto* value = std::get_if<uint32_t>(&kv.value.v);
    if (value == nullptr || !detail::is_power_of_two(*value))
      return invalid_argument(std::string("metadata '") + detail::kAlignmentKey + "' is " +
                              detail::describe_value(kv.value) +
                              ", expected a uint32 power of two");
    return uint64_t{*value};
  }
  return kDefaultAlignment;
}

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

} // namespace

void GgufWriter::set(const std::string& key, Value value) {
  for (KeyValue& kv : metadata_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  metadata_.push_back(KeyValue{key, std::move(value)});
}

Status GgufWriter::add_tensor(const std::string& name, TensorType type, std::vector<int64_t> dims,
                              FillFn fill) {
  const std::string what = "tensor " + quoted(name);
  for (const PendingTensor& t : tensors_)
    if (t.name == name)
      return invalid_argument(what + " was already added");
  const TensorTypeTraits* traits = tensor_type_traits(static_cast<uint32_t>(type));
  if (traits == nullptr)
    return invalid_argument(what + ": type id " + std::to_string(static_cast<uint32_t>(type)) +
                            " is not a supported type");
  if (dims.empty() || dims.size() > static_cast<size_t>(kMaxDims))
    return invalid_argument(what + " has " + std::to_string(dims.size()) +
                            " dimensions, expected 1 to " + std::to_string(kMaxDims));
  int64_t n_values = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 1)
      return invalid_argument(what + ": dims[" + std::to_string(d) + "] is " +
                              std::to_string(dims[d]) + ", expected at least 1");
    if (__builtin_mul_overflow(n_values, dims[d], &n_values))
      return invalid_argument(what + ": the number of values overflows 64 bits");
  }
  if (dims[0] % traits->block_values != 0)
    return invalid_argument(what + ": row length " + std::to_string(dims[0]) +
                            " is not a multiple of " + traits->name + "'s block of " +
                            std::to_string(traits->block_values) + " values");
  uint64_t n_bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n_values / traits->block_values),
                             static_cast<uint64_t>(traits->block_bytes), &n_bytes))
    return invalid_argument(what + ": its size in bytes overflows 64 bits");
  tensors_.push_back(PendingTensor{name, type, std::move(dims), n_bytes, std::move(fill)});
  return Status::ok_status();
}

std::vector<std::string> GgufWriter::output_paths(const std::string& path,
                                                  const WriteOptions& options) const {
  if (options.split_max_tensors == 0)
    return {path};
  const size_t per = options.split_max_tensors;
  const size_t n = std::max<size_t>(1, (tensors_.size() + per - 1) / per);
  std::vector<std::string> paths;
  const std::string prefix = split_prefix_of(path);
  for (size_t k = 0; k < n && k < kMaxSplitCount; ++k)
    paths.push_back(split_shard_path(prefix, static_cast<uint32_t>(k), static_cast<uint32_t>(n)));
  return paths;
}

Status GgufWriter::write(const std::string& path, WriteOptions options) const {
  PSHARD_ASSIGN_OR_RETURN(const uint64_t alignment, alignment_of(metadata_));
  // Split keys copied from another split model would describe other files: this
  // write's own are added below.
  std::vector<KeyValue> model_keys;
  for (const KeyValue& kv : metadata_)
    if (!is_split_key(kv.key))
      model_keys.push_back(kv);
  if (options.split_max_tensors == 0) {
    TempFile file(path);
    PSHARD_RETURN_IF_ERROR(
        write_file(file, model_keys, 0, tensors_.size(), alignment, options.sparse));
    return file.commit();
  }

  const std::vector<std::string> paths = output_paths(path, options);
  const size_t per = options.split_max_tensors;
  if ((tensors_.size() + per - 1) / per > kMaxSplitCount || tensors_.size() > INT32_MAX)
    return invalid_argument(std::to_string(tensors_.size()) + " tensors at most " +
                            std::to_string(per) + " a file make more than " +
                            std::to_string(kMaxSplitCount) + " files; allow more tensors per file");
  // Every shard is written and flushed before any is renamed into place.
  std::vector<std::unique_ptr<TempFile>> files;
  for (size_t k = 0; k < paths.size(); ++k) {
    std::vector<KeyValue> keys;
    if (k == 0)
      keys = model_keys;
    else if (alignment != kDefaultAlignment) // every shard's tensors aligned alike
      keys.push_back({detail::kAlignmentKey, Value{static_cast<uint32_t>(alignment)}});
    keys.push_back({kSplitNoKey, Value{static_cast<uint16_t>(k)}});
    keys.push_back({kSplitCountKey, Value{static_cast<uint16_t>(paths.size())}});
    keys.push_back({kSplitTensorsCountKey, Value{static_cast<int32_t>(tensors_.size())}});
    const size_t begin = std::min(tensors_.size(), k * per);
    const size_t end = std::min(tensors_.size(), begin + per);
    files.push_back(std::make_unique<TempFile>(paths[k]));
    PSHARD_RETURN_IF_ERROR(write_file(*files.back(), keys, begin, end, alignment, options.sparse));
    PSHARD_RETURN_IF_ERROR(files.back()->finish());
  }
  for (const auto& file : files)
    PSHARD_RETURN_IF_ERROR(file->publish());
  return Status::ok_status();
}

Status GgufWriter::write_file(TempFile& file, const std::vector<KeyValue>& metadata,
                              size_t begin, size_t end, uint64_t alignment, bool sparse) const {
  const std::string& path = file.final_path();
  // Each tensor starts aligned; the data section's size is padded likewise.
  std::vector<uint64_t> offsets;
  offsets.reserve(end - begin);
  uint64_t data_size = 0;
  for (size_t i = begin; i < end; ++i) {
    offsets.push_back(data_size);
    uint64_t tensor_end = 0;
    if (__builtin_add_overflow(data_size, tensors_[i].n_bytes, &tensor_end) ||
        !detail::align_up(tensor_end, alignment, data_size))
      return invalid_argument("the tensors' total size overflows 64 bits");
  }

  detail::ByteSink header;
  for (char c : detail::kMagic)
    header.put<char>(c);
  header.put<uint32_t>(detail::kWriteVersion);
  header.put<uint64_t>(end - begin);
  header.put<uint64_t>(metadata.size());
  for (const KeyValue& kv : metadata) {
    header.put_string(kv.key);
    header.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    PSHARD_RETURN_IF_ERROR(detail::encode_value(kv.value, kv.key, header));
  }
  for (size_t i = begin; i < end; ++i) {
    const PendingTensor& t = tensors_[i];
    header.put_string(t.name);
    header.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims)
      header.put<uint64_t>(static_cast<uint64_t>(d));
    header.put<uint32_t>(static_cast<uint32_t>(t.type));
    header.put<uint64_t>(offsets[i - begin]);
  }
  uint64_t data_offset = 0;
  uint64_t total = 0;
  if (!detail::align_up(header.size(), alignment, data_offset) ||
      __builtin_add_overflow(data_offset, data_size, &total))
    return invalid_argument("the file's size overflows 64 bits");
  header.pad_to(data_offset);

  PSHARD_RETURN_IF_ERROR(file.open());
  PSHARD_RETURN_IF_ERROR(file.write_all(header.bytes().data(), header.size()));
  if (sparse)
    return file.extend_to(total);
  for (size_t i = begin; i < end; ++i) {
    const PendingTensor& t = tensors_[i];
    PSHARD_RETURN_IF_ERROR(file.write_zeros_to(data_offset + offsets[i - begin]));
    // Zeroed, so a FillFn that writes only part (or an empty one) gives zeros.
    std::unique_ptr<uint8_t, FreeDeleter> buffer(static_cast<uint8_t*>(std::calloc(t.n_bytes, 1)));
    if (buffer == nullptr)
      return Status(StatusCode::kOutOfMemory, "cannot allocate " + std::to_string(t.n_bytes) +
                                                  " bytes for tensor " + quoted(t.name));
    if (t.fill)
      PSHARD_RETURN_IF_ERROR(
          t.fill(std::span<uint8_t>(buffer.get(), t.n_bytes))
              .with_context("while writing tensor " + quoted(t.name) + " to '" + path + "'"));
    PSHARD_RETURN_IF_ERROR(file.write_all(buffer.get(), t.n_bytes));
  }
  return file.write_zeros_to(total);
}

} // namespace pshard::gguf
