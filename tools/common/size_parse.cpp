#include "tools/common/size_parse.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace pshard {

Result<uint64_t> parse_size(std::string_view text) {
  const std::string original(text);
  auto bad = [&] {
    return invalid_argument("cannot read size '" + original +
                            "': expected a number with an optional K, M or G suffix "
                            "(powers of 1024), e.g. 512M or 1.5G");
  };
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  if (end == 0)
    return bad();
  double number = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (ec != std::errc() || ptr != text.data() + end)
    return bad();
  std::string suffix(text.substr(end));
  for (auto& c : suffix)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (suffix.empty() || suffix == "B")
    scale = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return bad();
  const double bytes = std::round(number * scale);
  if (!(bytes >= 0) || bytes > 1.8e19)
    return bad();
  return static_cast<uint64_t>(bytes);
}

} // namespace pshard
