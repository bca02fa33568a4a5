#include "runtime/serve/text_stream.h"

#include <algorithm>

namespace pshard {

size_t TextStream::partial_stop_suffix(std::string_view text) const {
  size_t longest = 0;
  for (const std::string& stop : stops_)
    for (size_t n = std::min(stop.size() - 1, text.size()); n > longest; --n)
      if (text.substr(text.size() - n) == std::string_view(stop).substr(0, n)) {
        longest = n;
        break;
      }
  return longest;
}

TextStream::Piece TextStream::push(std::string_view bytes) {
  if (stopped_)
    return {};
  std::string text = held_ + utf8_.push(bytes);
  held_.clear();
  size_t cut = std::string::npos;
  int index = -1;
  for (size_t i = 0; i < stops_.size(); ++i)
    if (const size_t at = text.find(stops_[i]); at < cut) {
      cut = at;
      index = static_cast<int>(i);
    }
  if (cut != std::string::npos) {
    stopped_ = true;
    text.resize(cut);
    return {std::move(text), true, index};
  }
  const size_t hold = partial_stop_suffix(text);
  held_ = text.substr(text.size() - hold);
  text.resize(text.size() - hold);
  return {std::move(text), false};
}

std::string TextStream::flush() {
  if (stopped_)
    return "";
  std::string rest = held_ + utf8_.flush();
  held_.clear();
  return rest;
}

} // namespace pshard
