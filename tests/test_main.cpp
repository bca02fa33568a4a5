// The main of every GoogleTest binary here. ctest runs each test case as its own
// process, several at once, so two cases that name the same file under
// ::testing::TempDir() would race: one rewrites it while the other reads it (CI saw
// a chat-template test read its sibling's model). Each process therefore gets its
// own TempDir(): a fresh directory under the usual one, removed when it ends.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string pattern = ::testing::TempDir() + "pshard-test.XXXXXX";
  const char* dir = ::mkdtemp(pattern.data());
  if (dir == nullptr) {
    std::fprintf(stderr,
                 "cannot make a temporary directory from %s: %s; set TEST_TMPDIR to a "
                 "writable directory\n",
                 pattern.c_str(), std::strerror(errno));
    return 2;
  }
  ::setenv("TEST_TMPDIR", dir, 1);
  const int rc = RUN_ALL_TESTS();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return rc;
}
