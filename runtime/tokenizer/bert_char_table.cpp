#include "runtime/tokenizer/bert_char_table.h"

#include "runtime/tokenizer/bert_char_table_data.h"
#include "runtime/tokenizer/hangul_jamo.h"
#include "runtime/tokenizer/utf8.h"

namespace pshard {
namespace {

namespace data = bert_char_data;

bool is_hangul_rule(uint16_t rule) { return data::kRuleKind[rule] == data::kHangulSyllableKind; }

void append_hangul_jamo(char32_t syllable, std::string& out) {
  char32_t jamo[3];
  const int n = hangul_jamo(syllable, jamo);
  for (int i = 0; i < n; ++i)
    append_utf8(jamo[i], out);
}

} // namespace

BertChar::BertChar(char32_t c, uint16_t rule)
    : c_(c), rule_(rule),
      kind_(is_hangul_rule(rule) ? BertCharKind::kWord
                                 : static_cast<BertCharKind>(data::kRuleKind[rule])) {}

BertChar BertChar::of(char32_t c) {
  // Past U+10FFFF: U+0000's rule, a kDropped one.
  const char32_t looked_up = c > 0x10FFFF ? 0 : c;
  const uint16_t block = data::kBlockOf[looked_up >> 8];
  return BertChar(c, data::kBlocks[block * 256u + (looked_up & 0xFF)]);
}

void BertChar::append_to(std::string& out) const {
  if (kind_ == BertCharKind::kDropped || kind_ == BertCharKind::kSpace)
    return;
  if (is_hangul_rule(rule_)) {
    append_hangul_jamo(c_, out);
    return;
  }
  const uint8_t length = data::kRuleLength[rule_];
  if (length == 0)
    append_utf8(c_, out);
  else
    out.append(reinterpret_cast<const char*>(data::kText) + data::kRuleOffset[rule_], length);
}

const char* BertChar::unicode_version() { return data::kUnicodeVersion; }

} // namespace pshard
