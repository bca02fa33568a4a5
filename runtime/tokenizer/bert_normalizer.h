// BERT's preparation of text for WordPiece, as Hugging Face's BertNormalizer and
// BertPreTokenizer do it for uncased models: control and format characters are
// dropped, accents stripped (NFD, then no non-spacing marks), letters lowercased, the
// text split at whitespace, and each punctuation character and CJK ideograph made a
// word of its own. Malformed UTF-8 bytes are dropped, as BERT drops U+FFFD.
// The character rules are in bert_char_table.h.
//
//   std::vector<std::string> words;
//   split_bert_words("H\u00E9llo, \u4E16\u754C!", words);  // "hello" "," "世" "界" "!"
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pshard {

// Appends the words of `text` (normalized UTF-8, never empty) to `words`.
void split_bert_words(std::string_view text, std::vector<std::string>& words);

} // namespace pshard
