#include "runtime/core/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard {

Status read_whole_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                       std::vector<uint8_t>* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = "cannot open '" + path + "': " + std::strerror(errno);
    return errno == ENOENT ? not_found(why) : io_error(why);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error("'" + path + "' is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return invalid_format("'" + path + "' is " + std::to_string(st.st_size) +
                          " bytes, far larger than any " + what);
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "file shrank while reading";
      ::close(fd);
      return io_error("cannot read '" + path + "': " + why);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return Status::ok_status();
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
