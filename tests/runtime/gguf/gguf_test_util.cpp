#include "gguf_test_util.h"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <type_traits>

namespace pshard::gguf::testing {

ScopedTempDir::ScopedTempDir() {
  std::string pattern = ::testing::TempDir() + "/gguf_test.XXXXXX";
  char* made = ::mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << std::strerror(errno);
  path_ = pattern;
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> ScopedTempDir::entries() const {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path_))
    names.push_back(entry.path().filename().string());
  return names;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

bool values_equal(const Value& a, const Value& b) {
  if (a.type() != b.type())
    return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b.v);
        if constexpr (std::is_same_v<T, Array>) {
          if (x.element_type != y.element_type || x.items.size() != y.items.size())
            return false;
          for (size_t i = 0; i < x.items.size(); ++i)
            if (!values_equal(x.items[i], y.items[i]))
              return false;
          return true;
        } else if constexpr (std::is_floating_point_v<T>) {
          using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
          return std::bit_cast<Bits>(x) == std::bit_cast<Bits>(y);
        } else {
          return x == y;
        }
      },
      a.v);
}

} // namespace pshard::gguf::testing
