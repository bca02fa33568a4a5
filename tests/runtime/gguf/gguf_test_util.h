// Helpers shared by the GGUF tests.
#pragma once

#include "runtime/gguf/gguf_value.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard::gguf::testing {

// A fresh directory under the test temp dir, removed with everything in it.
class ScopedTempDir {
public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> entries() const;

private:
  std::string path_;
};

std::vector<uint8_t> read_file(const std::string& path);

// Deep equality that also compares on-disk types (and NaNs by bits).
bool values_equal(const Value& a, const Value& b);

} // namespace pshard::gguf::testing
