#include "runtime/core/temp_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard {

TempFile::TempFile(std::string final_path)
    : final_path_(std::move(final_path)),
      temp_path_(final_path_ + ".tmp." + std::to_string(::getpid())) {}

TempFile::~TempFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!published_)
    ::unlink(temp_path_.c_str());
}

Status TempFile::open() {
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  return fd_ < 0 ? error("create") : Status::ok_status();
}

Status TempFile::write_all(const uint8_t* data, uint64_t n) {
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

Status TempFile::write_zeros_to(uint64_t offset) {
  static constexpr uint8_t kZeros[4096] = {};
  while (written_ < offset)
    PSHARD_RETURN_IF_ERROR(write_all(kZeros, std::min<uint64_t>(offset - written_, 4096)));
  return Status::ok_status();
}

Status TempFile::extend_to(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    return error("extend");
  return Status::ok_status();
}

Status TempFile::finish() {
  if (::fsync(fd_) != 0)
    return error("flush");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    return error("close");
  return Status::ok_status();
}

Status TempFile::publish() {
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0)
    return io_error("cannot rename '" + temp_path_ + "' to '" + final_path_ +
                    "': " + std::strerror(errno));
  published_ = true;
  return Status::ok_status();
}

Status TempFile::commit() {
  PSHARD_RETURN_IF_ERROR(finish());
  return publish();
}

Status TempFile::error(const char* action) const {
  return io_error(std::string("cannot ") + action + " '" + temp_path_ +
                  "': " + std::strerror(errno));
}

} // namespace pshard
