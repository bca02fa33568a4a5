// bert_char_table_gen: writes the table behind runtime/tokenizer/bert_char_table.h, what
// BERT's normalizer and pre-tokenizer make of every code point, computed with ICU at
// build time so that the runtime needs no ICU (libicuuc.a is not position-independent,
// so it cannot go into libpshard.so, and libicudata.so is 31 MB).
//
//   bert_char_table_gen OUT.cpp
//
// The rules are those of Hugging Face tokenizers' BertNormalizer (clean_text,
// handle_chinese_chars, strip_accents and lowercase all on) and BertPreTokenizer, which
// produced the reference ids of BERT vocabularies:
//   - dropped: NUL, U+FFFD and the categories Cc, Cf, Co (Cs cannot occur) except tab,
//     LF and CR;
//   - space: the White_Space property (ends a word);
//   - the rest is NFD-decomposed, its non-spacing marks (Mn) dropped (nothing left:
//     dropped) and each character lowercased on its own (full mapping, no context:
//     a lone capital sigma becomes σ);
//   - isolated (a word of its own): a CJK ideograph in the ranges BERT names, or a
//     character whose normalized form is punctuation (category P*, or ASCII
//     !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~);
//   - otherwise part of a word.
// Hangul syllables are decomposed by the Unicode Standard's arithmetic (section 3.12) at
// run time rather than stored; the generator checks that ICU agrees for each of them.
// Normalizing character by character equals NFD of the whole text but for canonical
// reordering, which sorts adjacent combining marks by class: the non-spacing ones are
// dropped anyway, and of the rest only 26 spacing marks (Unicode 15: viramas, Hangul
// tone marks, musical stems) have a class, so only two of those side by side in
// non-canonical order would come out differently.
// The generator also checks that normalizing is idempotent (check_stable).
//
// The output is the arrays bert_char_table_data.h declares and draws: a two-stage
// lookup from code point to rule, and per rule a kind and the normalized form (UTF-8,
// none when the character stays as it is). Identical blocks of 256 code points share
// one copy (Unicode 15: about 160 distinct of 4352), and so do identical rules.
#include "runtime/tokenizer/bert_char_table.h"
#include "runtime/tokenizer/bert_char_table_data.h"
#include "runtime/tokenizer/hangul_jamo.h"
#include "runtime/tokenizer/utf8.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unicode/uchar.h>
#include <unicode/uclean.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/uversion.h>
#include <utility>
#include <vector>

namespace {

constexpr int kDropped = static_cast<int>(pshard::BertCharKind::kDropped);
constexpr int kSpace = static_cast<int>(pshard::BertCharKind::kSpace);
constexpr int kIsolated = static_cast<int>(pshard::BertCharKind::kIsolated);
constexpr int kWord = static_cast<int>(pshard::BertCharKind::kWord);
constexpr int kHangulSyllable = pshard::bert_char_data::kHangulSyllableKind;

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr int kBlockBits = 8;

// The ideograph ranges BERT isolates, as Hugging Face's BertNormalizer spells them
// (its Extension E starts at U+2B920 where the block starts at U+2B820; the
// reference ids follow it, and so does this table).
constexpr std::pair<char32_t, char32_t> kCjkRanges[] = {
    {0x4E00, 0x9FFF},   {0x3400, 0x4DBF},   {0x20000, 0x2A6DF}, {0x2A700, 0x2B73F},
    {0x2B740, 0x2B81F}, {0x2B920, 0x2CEAF}, {0xF900, 0xFAFF},   {0x2F800, 0x2FA1F}};

bool is_cjk(char32_t c) {
  for (const auto& [first, last] : kCjkRanges)
    if (c >= first && c <= last)
      return true;
  return false;
}

bool is_ascii_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126);
}

bool is_punctuation(char32_t c) {
  return is_ascii_punctuation(c) || u_ispunct(static_cast<UChar32>(c));
}

bool is_dropped_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r')
    return false;
  const int8_t category = u_charType(static_cast<UChar32>(c));
  return c == 0 || c == 0xFFFD || category == U_CONTROL_CHAR || category == U_FORMAT_CHAR ||
         category == U_PRIVATE_USE_CHAR || category == U_SURROGATE;
}

std::vector<char32_t> code_points(const std::u16string& s) {
  std::vector<char32_t> out;
  for (int32_t i = 0; i < static_cast<int32_t>(s.size());) {
    UChar32 c;
    U16_NEXT(s.data(), i, static_cast<int32_t>(s.size()), c);
    out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

std::u16string utf16(char32_t c) {
  char16_t units[2];
  int32_t length = 0;
  U16_APPEND_UNSAFE(units, length, static_cast<UChar32>(c)); // c is never a surrogate
  return std::u16string(units, static_cast<size_t>(length));
}

// Fails the generator (and so the build) with a message.
[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "bert_char_table_gen: %s\n", why.c_str());
  std::exit(1);
}

void check(UErrorCode status, const char* what) {
  if (U_FAILURE(status))
    fail(std::string(what) + ": " + u_errorName(status));
}

// NFD, without non-spacing marks, each character lowercased alone.
std::vector<char32_t> normalize(char32_t c, const UNormalizer2* nfd) {
  const std::u16string in = utf16(c);
  char16_t decomposed[64];
  UErrorCode status = U_ZERO_ERROR;
  const int32_t length = unorm2_normalize(nfd, reinterpret_cast<const UChar*>(in.data()),
                                          static_cast<int32_t>(in.size()),
                                          reinterpret_cast<UChar*>(decomposed), 64, &status);
  check(status, "unorm2_normalize");
  std::vector<char32_t> out;
  for (char32_t d : code_points(std::u16string(decomposed, static_cast<size_t>(length)))) {
    if (u_charType(static_cast<UChar32>(d)) == U_NON_SPACING_MARK)
      continue;
    const std::u16string one = utf16(d);
    char16_t lower[16];
    status = U_ZERO_ERROR;
    const int32_t n = u_strToLower(reinterpret_cast<UChar*>(lower), 16,
                                   reinterpret_cast<const UChar*>(one.data()),
                                   static_cast<int32_t>(one.size()), "", &status);
    check(status, "u_strToLower");
    for (char32_t l : code_points(std::u16string(lower, static_cast<size_t>(n))))
      out.push_back(l);
  }
  return out;
}

std::string hex(char32_t c) {
  char text[16];
  std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(c));
  return text;
}

struct Rule {
  int kind;
  std::string text; // normalized UTF-8; empty: unchanged
  bool operator<(const Rule& other) const {
    return std::tie(kind, text) < std::tie(other.kind, other.text);
  }
};

Rule rule_of(char32_t c, const UNormalizer2* nfd) {
  if ((c >= 0xD800 && c <= 0xDFFF) || is_dropped_control(c))
    return {kDropped, {}};
  if (u_isUWhiteSpace(static_cast<UChar32>(c)))
    return {kSpace, {}};
  const std::vector<char32_t> normalized = normalize(c, nfd);
  if (pshard::is_hangul_syllable(c)) {
    char32_t jamo[3];
    if (normalized != std::vector<char32_t>(jamo, jamo + pshard::hangul_jamo(c, jamo)))
      fail("ICU's NFD of " + hex(c) + " is not the Unicode Standard's Hangul decomposition");
    return {kHangulSyllable, {}};
  }
  if (normalized.empty())
    return {kDropped, {}};
  bool punctuation = false;
  for (char32_t n : normalized) {
    // The pre-tokenizer sees the normalized text; the table gives each input character
    // one kind, which holds as long as normalizing never makes space, control or mixed
    // punctuation. A newer Unicode that breaks this stops the build here.
    if (u_isUWhiteSpace(static_cast<UChar32>(n)) || is_dropped_control(n))
      fail(hex(c) + " normalizes to a space or control character");
    punctuation = punctuation || is_punctuation(n);
  }
  if (punctuation && normalized.size() != 1)
    fail(hex(c) + " normalizes to punctuation and more");
  std::string text;
  if (normalized.size() != 1 || normalized[0] != c)
    for (char32_t n : normalized)
      pshard::append_utf8(n, text);
  return {punctuation || is_cjk(c) ? kIsolated : kWord, text};
}

// Normalizing twice changes nothing: each character of a normalized form is one that
// stays as it is, of the same kind. So text decoded from ids encodes to the same ids.
void check_stable(char32_t c, const Rule& rule, const UNormalizer2* nfd) {
  std::vector<char32_t> normalized;
  if (rule.kind == kHangulSyllable) {
    char32_t jamo[3];
    normalized.assign(jamo, jamo + pshard::hangul_jamo(c, jamo));
  } else {
    for (size_t pos = 0; pos < rule.text.size();) {
      size_t length = 0;
      normalized.push_back(pshard::decode_utf8(rule.text, pos, &length));
      pos += length;
    }
  }
  const int kind = rule.kind == kHangulSyllable ? kWord : rule.kind;
  for (char32_t n : normalized) {
    const Rule again = rule_of(n, nfd);
    if (again.kind != kind || !again.text.empty())
      fail("normalizing " + hex(c) + " twice differs from normalizing it once");
  }
}

template <typename T>
void write_array(std::ostream& out, const char* declaration, const std::vector<T>& values) {
  out << declaration << "[" << values.size() << "] = {";
  for (size_t i = 0; i < values.size(); ++i)
    out << (i % 16 == 0 ? "\n    " : " ") << +values[i] << ",";
  out << "\n};\n";
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2)
    fail("usage: bert_char_table_gen OUT.cpp");
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&status);
  check(status, "unorm2_getNFDInstance");

  std::map<Rule, uint16_t> rule_ids;
  std::vector<Rule> rules;
  std::map<std::vector<uint16_t>, uint16_t> block_ids;
  std::vector<uint16_t> blocks;
  std::vector<uint16_t> block_of;
  constexpr char32_t kBlockSize = 1u << kBlockBits;
  for (char32_t first = 0; first <= kMaxCodePoint; first += kBlockSize) {
    std::vector<uint16_t> block;
    for (char32_t c = first; c < first + kBlockSize; ++c) {
      Rule rule = rule_of(c, nfd);
      check_stable(c, rule, nfd);
      auto [at, added] = rule_ids.emplace(rule, static_cast<uint16_t>(rules.size()));
      if (added)
        rules.push_back(std::move(rule));
      block.push_back(at->second);
    }
    auto [at, added] = block_ids.emplace(block, static_cast<uint16_t>(block_ids.size()));
    if (added)
      blocks.insert(blocks.end(), block.begin(), block.end());
    block_of.push_back(at->second);
  }
  if (rules.size() > UINT16_MAX || block_ids.size() > UINT16_MAX)
    fail("the table outgrew its 16-bit indices");

  std::string text;
  std::vector<uint32_t> rule_offsets;
  std::vector<uint8_t> rule_lengths;
  std::vector<uint8_t> rule_kinds;
  for (const Rule& rule : rules) {
    if (rule.text.size() > UINT8_MAX)
      fail("a normalized form longer than 255 bytes");
    rule_offsets.push_back(static_cast<uint32_t>(text.size()));
    rule_lengths.push_back(static_cast<uint8_t>(rule.text.size()));
    rule_kinds.push_back(static_cast<uint8_t>(rule.kind));
    text += rule.text;
  }
  std::vector<uint8_t> text_bytes(text.begin(), text.end());

  UVersionInfo unicode;
  u_getUnicodeVersion(unicode);
  char version[U_MAX_VERSION_STRING_LENGTH];
  u_versionToString(unicode, version);

  std::ostringstream out;
  out << "// Generated by runtime/tokenizer/tablegen/bert_char_table_gen.cpp from ICU "
      << U_ICU_VERSION << " (Unicode " << version << "). Do not edit.\n"
      << "#include \"runtime/tokenizer/bert_char_table_data.h\"\n\n"
      << "namespace pshard::bert_char_data {\n\n"
      << "const char kUnicodeVersion[] = \"" << version << "\";\n";
  write_array(out, "const uint16_t kBlockOf", block_of);
  write_array(out, "const uint16_t kBlocks", blocks);
  write_array(out, "const uint32_t kRuleOffset", rule_offsets);
  write_array(out, "const uint8_t kRuleLength", rule_lengths);
  write_array(out, "const uint8_t kRuleKind", rule_kinds);
  write_array(out, "const unsigned char kText", text_bytes);
  out << "\n} // namespace pshard::bert_char_data\n";

  // Written to a temporary name, then renamed, so an interrupted build leaves no half file.
  const std::string path = argv[1];
  const std::string temp = path + ".tmp";
  {
    std::ofstream file(temp, std::ios::binary);
    file << out.str();
    if (!file)
      fail("cannot write " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    fail("cannot rename " + temp + " to " + path);
  u_cleanup();
  return 0;
}
