// Writing GGUF v3 files (layout drawn in gguf_file.h). The header is built in
// memory; tensor data is produced one tensor at a time, so at most one tensor's
// bytes are ever held. The file appears under its name only once complete.
#include "runtime/gguf/gguf_writer.h"

#include "runtime/gguf/gguf_encode.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard::gguf {
namespace {

using detail::quoted;

// A file being written under a temporary name; removed unless committed, so a
// failure at any step leaves nothing behind.
class TempFile {
public:
  explicit TempFile(std::string final_path)
      : final_path_(std::move(final_path)),
        temp_path_(final_path_ + ".tmp." + std::to_string(::getpid())) {}
  ~TempFile() {
    if (fd_ >= 0)
      ::close(fd_);
    if (!committed_)
      ::unlink(temp_path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  Status open() {
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return fd_ < 0 ? error("create") : Status::ok_status();
  }

  Status write_all(const uint8_t* data, uint64_t n) {
    while (n > 0) {
      const ssize_t done = ::write(fd_, data, std::min<uint64_t>(n, uint64_t{1} << 30));
      if (done < 0 && errno == EINTR)
        continue;
      if (done < 0)
        return error("write");
      data += done;
      n -= static_cast<uint64_t>(done);
      written_ += static_cast<uint64_t>(done);
    }
    return Status::ok_status();
  }

  Status write_zeros_to(uint64_t offset) {
    static constexpr uint8_t kZeros[4096] = {};
    while (written_ < offset)
      PSHARD_RETURN_IF_ERROR(write_all(kZeros, std::min<uint64_t>(offset - written_, 4096)));
    return Status::ok_status();
  }

  // Extends the file to `size` without writing: the rest becomes a hole.
  Status extend_to(uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
      return error("extend");
    return Status::ok_status();
  }

  Status commit() {
    if (::fsync(fd_) != 0)
      return error("flush");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      return error("close");
    if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0)
      return io_error("cannot rename '" + temp_path_ + "' to '" + final_path_ +
                      "': " + std::strerror(errno));
    committed_ = true;
    return Status::ok_status();
  }

private:
  Status error(const char* action) const {
    return io_error(std::string("cannot ") + action + " '" + temp_path_ +
                    "': " + std::strerror(errno));
  }

  std::string final_path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

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

Status GgufWriter::write(const std::string& path, WriteOptions options) const {
  PSHARD_ASSIGN_OR_RETURN(const uint64_t alignment, alignment_of(metadata_));

  // Each tensor starts aligned; the data section's size is padded likewise.
  std::vector<uint64_t> offsets;
  offsets.reserve(tensors_.size());
  uint64_t data_size = 0;
  for (const PendingTensor& t : tensors_) {
    offsets.push_back(data_size);
    uint64_t end = 0;
    if (__builtin_add_overflow(data_size, t.n_bytes, &end) ||
        !detail::align_up(end, alignment, data_size))
      return invalid_argument("the tensors' total size overflows 64 bits");
  }

  detail::ByteSink header;
  for (char c : detail::kMagic)
    header.put<char>(c);
  header.put<uint32_t>(detail::kWriteVersion);
  header.put<uint64_t>(tensors_.size());
  header.put<uint64_t>(metadata_.size());
  for (const KeyValue& kv : metadata_) {
    header.put_string(kv.key);
    header.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    PSHARD_RETURN_IF_ERROR(detail::encode_value(kv.value, kv.key, header));
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    header.put_string(t.name);
    header.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims)
      header.put<uint64_t>(static_cast<uint64_t>(d));
    header.put<uint32_t>(static_cast<uint32_t>(t.type));
    header.put<uint64_t>(offsets[i]);
  }
  uint64_t data_offset = 0;
  uint64_t total = 0;
  if (!detail::align_up(header.size(), alignment, data_offset) ||
      __builtin_add_overflow(data_offset, data_size, &total))
    return invalid_argument("the file's size overflows 64 bits");
  header.pad_to(data_offset);

  TempFile file(path);
  PSHARD_RETURN_IF_ERROR(file.open());
  PSHARD_RETURN_IF_ERROR(file.write_all(header.bytes().data(), header.size()));
  if (options.sparse) {
    PSHARD_RETURN_IF_ERROR(file.extend_to(total));
    return file.commit();
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    PSHARD_RETURN_IF_ERROR(file.write_zeros_to(data_offset + offsets[i]));
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
  PSHARD_RETURN_IF_ERROR(file.write_zeros_to(total));
  return file.commit();
}

} // namespace pshard::gguf
