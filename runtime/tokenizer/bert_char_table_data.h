// The arrays tablegen/bert_char_table_gen.cpp generates at build time (from ICU) for
// bert_char_table.cpp; nothing else reads them. Layout:
//
//   kBlockOf[c >> 8]                 -> block b (blocks are shared where identical)
//   kBlocks[b * 256 + (c & 0xFF)]    -> rule r
//   kRuleKind[r]                     -> a BertCharKind
//   kText[kRuleOffset[r]], kRuleLength[r] bytes
//                                    -> c's normalized form in UTF-8 (none: c unchanged)
#pragma once

#include <cstdint>

namespace pshard::bert_char_data {

// The kind of the rule of every precomposed Hangul syllable: a kWord whose normalized
// form is its jamo (hangul_jamo.h), computed rather than stored.
inline constexpr uint8_t kHangulSyllableKind = 4;

extern const char kUnicodeVersion[];
extern const uint16_t kBlockOf[0x110000 >> 8];
extern const uint16_t kBlocks[];
extern const uint32_t kRuleOffset[];
extern const uint8_t kRuleLength[];
extern const uint8_t kRuleKind[];
extern const unsigned char kText[];

} // namespace pshard::bert_char_data
