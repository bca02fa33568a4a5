#include "runtime/tokenizer/special_token_splitter.h"

#include <algorithm>

namespace pshard {
namespace {

// C's isspace in the "C" locale, which is what llama.cpp strips.
bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string_view strip_trailing_space(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string_view strip_leading_space(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front()))
    s.remove_prefix(1);
  return s;
}

} // namespace

SpecialTokenSplitter::SpecialTokenSplitter(const Vocabulary& vocab) {
  for (TokenId id = 0; id < vocab.size(); ++id) {
    const TokenData& token = vocab.tokens[id];
    const bool added = token.type == TokenType::kControl || token.type == TokenType::kUserDefined ||
                       token.type == TokenType::kUnknown;
    if (added && !token.text.empty())
      candidates_.push_back(
          {id, token.text, token.type == TokenType::kUserDefined, token.lstrip, token.rstrip});
  }
  std::stable_sort(
      candidates_.begin(), candidates_.end(),
      [](const Candidate& a, const Candidate& b) { return a.text.size() > b.text.size(); });
}

std::vector<TextFragment> SpecialTokenSplitter::split(std::string_view text,
                                                      bool parse_special) const {
  std::vector<TextFragment> fragments;
  if (text.empty())
    return fragments;
  fragments.push_back({kNoToken, text});
  std::vector<TextFragment> next;
  for (const Candidate& candidate : candidates_) {
    if (!candidate.always && !parse_special)
      continue;
    bool found = false;
    next.clear();
    for (const TextFragment& fragment : fragments) {
      std::string_view rest = fragment.text;
      size_t at = fragment.token == kNoToken ? rest.find(candidate.text) : std::string_view::npos;
      if (at == std::string_view::npos) {
        next.push_back(fragment);
        continue;
      }
      found = true;
      while (at != std::string_view::npos) {
        std::string_view left = rest.substr(0, at);
        if (candidate.lstrip)
          left = strip_trailing_space(left);
        if (!left.empty())
          next.push_back({kNoToken, left});
        next.push_back({candidate.id, {}});
        rest = rest.substr(at + candidate.text.size());
        if (candidate.rstrip)
          rest = strip_leading_space(rest);
        at = rest.find(candidate.text);
      }
      if (!rest.empty())
        next.push_back({kNoToken, rest});
    }
    if (found)
      fragments.swap(next);
  }
  return fragments;
}

} // namespace pshard
