// Reading and atomically writing profile files with plain POSIX calls: the library
// must not throw, so no iostreams error states to translate.
#include "runtime/profile/profile.h"

#include "runtime/core/file_bytes.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard {
namespace {

std::string errno_text() { return std::strerror(errno); }

} // namespace

Result<Profile> Profile::load_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  PSHARD_RETURN_IF_ERROR(read_whole_file(path, kMaxProfileBytes, "pshard profile", &bytes));
  Result<Profile> profile = load_bytes(bytes);
  if (!profile.ok())
    return profile.status().with_context("while loading '" + path + "'");
  return profile;
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  // Same directory as the target, so rename() never crosses a file system.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error("cannot create '" + temp + "': " + errno_text());
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const std::string why = errno_text();
      ::close(fd);
      ::unlink(temp.c_str());
      return io_error("cannot write '" + temp + "': " + why);
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const std::string sync_error = synced ? "" : errno_text();
  if (::close(fd) != 0 || !synced) {
    const std::string why = synced ? errno_text() : sync_error;
    ::unlink(temp.c_str());
    return io_error("cannot flush '" + temp + "': " + why);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp.c_str());
    return io_error("cannot rename '" + temp + "' to '" + path + "': " + why);
  }
  return Status::ok_status();
}

Status write_profile_file(const Profile& profile, const std::string& path) {
  return write_file_atomically(path, profile.bytes());
}

} // namespace pshard
