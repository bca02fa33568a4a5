// A file written under a temporary name next to its final one and renamed into place
// only once complete, so a failure at any step (or a crash) never leaves a half-written
// file (a model, a context's saved state) under the real name.
//
//   TempFile f("model.gguf");
//   PSHARD_RETURN_IF_ERROR(f.open());
//   PSHARD_RETURN_IF_ERROR(f.write_all(bytes, n));
//   PSHARD_RETURN_IF_ERROR(f.commit());   // fsync, close, rename
//
// A split model's shards are all finished (finish()) before any is renamed (publish()),
// so a failure while writing leaves none of them behind.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <string>

namespace pshard {

class TempFile {
public:
  explicit TempFile(std::string final_path);
  ~TempFile(); // removes the temporary file unless published
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  Status open();
  Status write_all(const uint8_t* data, uint64_t n);
  Status write_zeros_to(uint64_t offset);
  // Extends the file to `size` without writing: the rest becomes a hole.
  Status extend_to(uint64_t size);
  // Flushes and closes it.
  Status finish();
  // Renames the finished file to its final name.
  Status publish();
  Status commit();

  const std::string& final_path() const { return final_path_; }

private:
  Status error(const char* action) const;

  std::string final_path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool published_ = false;
};

} // namespace pshard
