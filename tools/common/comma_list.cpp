#include "tools/common/comma_list.h"

#include <algorithm>

namespace pshard {

std::vector<std::string> comma_list(const std::string& text, bool keep_empty) {
  std::vector<std::string> out;
  if (text.empty())
    return out;
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    if (comma > at || keep_empty)
      out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

} // namespace pshard
