// Opening GGUF files: metadata-only reads of the header, whole-file read-only
// mappings, and in-memory images. Parsing itself is in gguf_parser.cpp.
#include "runtime/gguf/gguf_file.h"

#include "runtime/gguf/gguf_internal.h"
#include "runtime/gguf/gguf_parser.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard::gguf {
namespace {

// Most headers (a 32k vocabulary, a few hundred tensors) fit in the first read;
// larger ones (150k+ vocabularies) take a retry or two.
constexpr uint64_t kFirstHeaderRead = uint64_t{256} << 10;

class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

Status errno_status(const std::string& action, const std::string& path, int err) {
  std::string msg = "cannot " + action + " '" + path + "': " + std::strerror(err);
  if (err == ENOENT)
    return not_found(std::move(msg));
  return io_error(std::move(msg));
}

// Reads bytes [from, to) of the file into out[from, to).
Status read_range(int fd, const std::string& path, uint8_t* out, size_t from, size_t to) {
  size_t done = from;
  while (done < to) {
    const ssize_t got = ::pread(fd, out + done, to - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return errno_status("read", path, errno);
    if (got == 0)
      return io_error("'" + path + "' became shorter while it was being read");
    done += static_cast<size_t>(got);
  }
  return Status::ok_status();
}

// Anonymous memory for `bytes`, starting on a 2 MiB boundary and asked to be backed by
// transparent huge pages (the kernel may decline: then it is ordinary memory). The
// reservation is over-allocated by 2 MiB and trimmed to the aligned range.
Result<void*> huge_page_memory(uint64_t bytes, size_t* size_out) {
  constexpr size_t kHuge = 2u << 20;
  const size_t size = (bytes + kHuge - 1) / kHuge * kHuge;
  void* raw = ::mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (raw == MAP_FAILED)
    return Status(StatusCode::kOutOfMemory, "cannot allocate " + std::to_string(size) +
                                                " bytes to read the model into: " +
                                                std::strerror(errno) + "; use the mapped file");
  const auto begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHuge - 1) / kHuge * kHuge;
  if (aligned > begin)
    ::munmap(raw, aligned - begin);
  const uintptr_t end = begin + size + kHuge;
  if (end > aligned + size)
    ::munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
#if defined(MADV_HUGEPAGE)
  ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE); // advice only
#endif
  *size_out = size;
  return reinterpret_cast<void*>(aligned);
}

} // namespace

GgufFile::~GgufFile() {
  for (const auto& [address, size] : mappings_)
    ::munmap(address, size);
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse(std::span<const uint8_t> bytes) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  ParsedHeader header;
  GgufParser parser(bytes, bytes.size());
  PSHARD_RETURN_IF_ERROR(parser.parse_into(header));
  PSHARD_RETURN_IF_ERROR(file->add_shard(std::move(header), "", bytes.size(), bytes));
  return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path, OpenMode mode) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  PSHARD_RETURN_IF_ERROR(file->add_shard_file(path, mode));
  PSHARD_RETURN_IF_ERROR(file->add_sibling_shards(mode));
  return file;
}

Status GgufFile::add_shard_file(const std::string& path, OpenMode mode) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return errno_status("open", path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return errno_status("stat", path, errno);
  if (!S_ISREG(st.st_mode))
    return invalid_argument("'" + path + "' is not a regular file");
  const auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size == 0)
    return invalid_format(path + ": the file is empty, not a GGUF file");

  ParsedHeader header;
  if (mode == OpenMode::kMapData || mode == OpenMode::kReadData) {
    void* mapping = nullptr;
    size_t mapping_size = 0;
    if (mode == OpenMode::kMapData) {
      mapping = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (mapping == MAP_FAILED)
        return errno_status("map", path, errno);
      mapping_size = file_size;
    } else {
      PSHARD_ASSIGN_OR_RETURN(mapping, huge_page_memory(file_size, &mapping_size));
    }
    // Owned from here on, so every failure below unmaps it.
    mappings_.emplace_back(mapping, mapping_size);
    if (mode == OpenMode::kReadData) {
      PSHARD_RETURN_IF_ERROR(
          read_range(fd.get(), path, static_cast<uint8_t*>(mapping), 0, file_size));
      ::mprotect(mapping, mapping_size, PROT_READ); // read-only like a mapping; advisory
    }
    const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(mapping), file_size);
    GgufParser parser(bytes, file_size);
    PSHARD_RETURN_IF_ERROR(parser.parse_into(header).with_context(path));
    return add_shard(std::move(header), path, file_size, bytes);
  }
  // Read a prefix; if the header is longer, read a longer one and parse again.
  // Tensor data is never read, so this costs the same on a 100 GB file.
  uint64_t want = std::min(file_size, kFirstHeaderRead);
  std::vector<uint8_t> prefix;
  for (;;) {
    const size_t have = prefix.size();
    prefix.resize(want);
    PSHARD_RETURN_IF_ERROR(read_range(fd.get(), path, prefix.data(), have, prefix.size()));
    GgufParser parser(prefix, file_size);
    Status status = parser.parse_into(header);
    if (status.ok())
      break;
    if (!parser.needs_more())
      return status.with_context(path);
    const uint64_t doubled = std::min(want * 2, detail::kMaxHeaderBytes);
    want = std::min(file_size, std::max(parser.bytes_needed(), doubled));
    header = ParsedHeader();
  }
  return add_shard(std::move(header), path, file_size, {});
}

Status GgufFile::add_shard(ParsedHeader header, std::string path, uint64_t file_size,
                           std::span<const uint8_t> bytes) {
  const auto index = static_cast<uint32_t>(shards_.size());
  GgufShard shard = std::move(header.shard);
  shard.path = std::move(path);
  shard.file_size = file_size;
  shard.bytes = bytes;
  shard.first_tensor = tensors_.size();
  shard.n_tensors = header.tensors.size();
  tensors_.reserve(tensors_.size() + header.tensors.size());
  for (TensorInfo& t : header.tensors) {
    auto [it, inserted] = tensor_index_.emplace(t.name, tensors_.size());
    if (!inserted)
      return invalid_format(
          "tensor " + detail::quoted(t.name) + " is in both '" +
          shards_[tensors_[it->second].shard].path + "' and '" + shard.path +
          "': the shards are from different models or splits; use the shards of one split");
    t.shard = index;
    tensors_.push_back(std::move(t));
  }
  if (index == 0)
    metadata_index_ = std::move(header.metadata_index);
  shards_.push_back(std::move(shard));
  return Status::ok_status();
}

uint64_t GgufFile::total_file_size() const {
  uint64_t n = 0;
  for (const GgufShard& s : shards_)
    n += s.file_size;
  return n;
}

uint64_t GgufFile::tensor_file_offset(const TensorInfo& tensor) const {
  return shards_[tensor.shard].data_offset + tensor.offset;
}

Result<uint8_t*> GgufFile::writable_tensor_data(const TensorInfo& tensor) {
  const uint8_t* data = tensor_data(tensor);
  for (const auto& [address, size] : mappings_) {
    const auto* begin = static_cast<const uint8_t*>(address);
    if (!data || data < begin || data + tensor.n_bytes > begin + size)
      continue;
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = reinterpret_cast<uintptr_t>(data) / page * page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(data) + tensor.n_bytes;
    if (::mprotect(reinterpret_cast<void*>(first), end - first, PROT_READ | PROT_WRITE) != 0)
      return Status(StatusCode::kIoError, "tensor '" + tensor.name +
                                              "': its pages could not be made writable (" +
                                              std::strerror(errno) + ")");
    return const_cast<uint8_t*>(data); // the mapping is the file's own, writable now
  }
  return invalid_argument("tensor '" + tensor.name +
                          "' is not in a mapping of the file's own (open it with kMapData or "
                          "kReadData to change it)");
}

const uint8_t* GgufFile::tensor_data(const TensorInfo& tensor) const {
  const GgufShard& shard = shards_[tensor.shard];
  if (shard.bytes.empty())
    return nullptr;
  return shard.bytes.data() + shard.data_offset + tensor.offset;
}

} // namespace pshard::gguf
