// SpecialTokenSplitter: cuts a vocabulary's added tokens out of text before the
// tokenizer proper sees it, the way llama.cpp does (tokenizer_st_partition):
//
//   - candidates are the control (3), user-defined (4) and unknown (2) tokens;
//     user-defined ones are always matched, the others only with parse_special;
//   - the longest candidate is cut out first, at every place it occurs, then the
//     next longest in the text that is left, and so on (so where two overlap,
//     the longer wins even if the shorter starts first);
//   - a token marked rstrip (lstrip) takes the whitespace after (before) it with
//     it, as Phi-3's chat tokens do.
//
//   SpecialTokenSplitter splitter(vocab);
//   for (const TextFragment& f : splitter.split("<s>Hi</s>", /*parse_special=*/true))
//     f.token != kNoToken ? out.push_back(f.token) : encode_text(f.text, out);
#pragma once

#include "runtime/tokenizer/token_id.h"
#include "runtime/tokenizer/vocabulary.h"

#include <string_view>
#include <vector>

namespace pshard {

struct TextFragment {
  TokenId token = kNoToken; // an added token, or kNoToken for text
  std::string_view text;    // the text to tokenize (a view into the input); empty for a token
};

class SpecialTokenSplitter {
public:
  // Keeps views of the candidates' texts: `vocab` must outlive the splitter and
  // stay where it is.
  explicit SpecialTokenSplitter(const Vocabulary& vocab);

  // The fragments of `text` in order. Text fragments are never empty.
  std::vector<TextFragment> split(std::string_view text, bool parse_special) const;

private:
  struct Candidate {
    TokenId id;
    std::string_view text;
    bool always; // user-defined: matched even without parse_special
    bool lstrip;
    bool rstrip;
  };
  std::vector<Candidate> candidates_; // longest first, then by id
};

} // namespace pshard
