// Small helpers shared by the readers of pshard's binary files (profiles, schedules):
// reading a whole file without exceptions, and wording what a header holds.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

// A regular file read in order from its start (read_whole_file, state files), its
// failures as statuses naming it: kNotFound for a file that does not exist.
class FileReader {
public:
  FileReader() = default;
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  Status open(const std::string& path);
  uint64_t size() const { return size_; }
  // Exactly n bytes, or an error (the file shrank while it was read).
  Status read(void* out, uint64_t n);

private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Reads all of a regular file. Files over `max_bytes` are refused as not being a
// `what` (e.g. "schedule artifact") before anything is allocated.
Status read_whole_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                       std::vector<uint8_t>* out);

// A text file (a prompt, a routing profile) whole: a clear error for a missing file, a
// directory or a device, naming `what` ("prompt file") and the path.
Result<std::string> read_text_file(const std::string& path, const std::string& what);

// A file identifier as text for messages: printable bytes as they are, others as \xNN.
std::string printable_identifier(std::span<const uint8_t> id);

// "major.minor"
std::string version_string(uint32_t major, uint32_t minor);

} // namespace pshard
