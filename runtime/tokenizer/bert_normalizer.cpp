#include "runtime/tokenizer/bert_normalizer.h"

#include "runtime/tokenizer/bert_char_table.h"
#include "runtime/tokenizer/utf8.h"

namespace pshard {

void split_bert_words(std::string_view text, std::vector<std::string>& words) {
  std::string word;
  const auto finish_word = [&] {
    if (!word.empty())
      words.push_back(std::move(word));
    word.clear();
  };
  for (size_t pos = 0; pos < text.size();) {
    size_t length = 0;
    char32_t c = decode_utf8(text, pos, &length);
    if (length == 0) { // a malformed byte: U+FFFD, which BERT drops
      c = 0xFFFD;
      length = 1;
    }
    pos += length;
    const BertChar bert = BertChar::of(c);
    switch (bert.kind()) {
    case BertCharKind::kDropped:
      break;
    case BertCharKind::kSpace:
      finish_word();
      break;
    case BertCharKind::kIsolated:
      finish_word();
      bert.append_to(word);
      finish_word();
      break;
    case BertCharKind::kWord:
      bert.append_to(word);
      break;
    }
  }
  finish_word();
}

} // namespace pshard
