#include "runtime/core/file_bytes.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard {

FileReader::~FileReader() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status FileReader::open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    const std::string why = "cannot open '" + path + "': " + std::strerror(errno);
    return errno == ENOENT ? not_found(why) : io_error(why);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))
    return io_error("'" + path + "' is not a regular file");
  size_ = static_cast<uint64_t>(st.st_size);
  return Status::ok_status();
}

Status FileReader::read(void* out, uint64_t n) {
  auto* p = static_cast<uint8_t*>(out);
  while (n > 0) {
    const ssize_t got = ::read(fd_, p, std::min<uint64_t>(n, uint64_t{1} << 30));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return io_error("cannot read '" + path_ +
                      "': " + (got < 0 ? std::strerror(errno) : "file shrank while reading"));
    p += got;
    n -= static_cast<uint64_t>(got);
  }
  return Status::ok_status();
}

Status read_whole_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                       std::vector<uint8_t>* out) {
  FileReader in;
  PSHARD_RETURN_IF_ERROR(in.open(path));
  if (in.size() > max_bytes)
    return invalid_format("'" + path + "' is " + std::to_string(in.size()) +
                          " bytes, far larger than any " + what);
  out->resize(static_cast<size_t>(in.size()));
  return in.read(out->data(), out->size());
}

Result<std::string> read_text_file(const std::string& path, const std::string& what) {
  std::vector<uint8_t> bytes;
  if (Status s = read_whole_file(path, 1ull << 32, what, &bytes); !s.ok())
    return Status(s.code(), what + ": " + s.message());
  return std::string(bytes.begin(), bytes.end());
}

std::string printable_identifier(std::span<const uint8_t> id) {
  std::string out;
  for (uint8_t c : id) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string version_string(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace pshard
