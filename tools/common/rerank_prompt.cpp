#include "tools/common/rerank_prompt.h"

namespace pshard {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

} // namespace

std::string rerank_prompt(const std::string& prompt, const std::string& query,
                          const std::string& document) {
  // The placeholders are marked apart first, so a query holding "{document}" stays as
  // written rather than being filled in turn.
  std::string text = prompt;
  replace_all(text, "{query}", "\x01q\x01");
  replace_all(text, "{document}", "\x01d\x01");
  replace_all(text, "\x01q\x01", query);
  replace_all(text, "\x01d\x01", document);
  return text;
}

} // namespace pshard
