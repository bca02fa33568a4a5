#include "runtime/tokenizer/pre_tokenizer_patterns.h"

#include <algorithm>
#include <string>

namespace pshard {
namespace {

// GPT-2's expression: English contractions, letters, digits, other symbols, each
// run with at most one leading space; whitespace that is not followed by a
// non-space (so "a  b" keeps one space for " b").
constexpr std::string_view kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

// Llama 3 and Qwen2 (tiktoken cl100k-style): case-insensitive contractions, a
// letter run with one leading non-letter, digits, symbols with trailing
// newlines; Llama 3 groups digits in threes, Qwen2 takes them one by one.
// tokenizer.json writes the contractions as (?i:'s|'t|...); they are spelled
// out per letter here as llama.cpp does, so "'ſ" (long s, which folds to s) is
// not a contraction — the only string where the two differ.
constexpr std::string_view kCl100kBeforeDigits =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)re";
constexpr std::string_view kCl100kAfterDigits =
    R"re(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

std::string cl100k_with_digits(std::string_view digits) {
  return std::string(kCl100kBeforeDigits) + std::string(digits) + std::string(kCl100kAfterDigits);
}

// Qwen3.5 (llama.cpp's "qwen35"): Qwen2's expression with combining marks kept in their
// word (`[\p{L}\p{M}]+`) and out of the symbol runs.
constexpr std::string_view kQwen35 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Ling / Ring (llama.cpp's "bailingmoe"): Qwen2's expression, digits one by one, with each
// line break its own piece (no runs of them).
constexpr std::string_view kBailing =
    R"re('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re";

// Mistral's Tekken: words split where lower case turns to upper case. This is
// tokenizer.json's own expression; llama.cpp rewrites it without \p{Lu} and
// \p{Ll}, which std::regex lacks, and PCRE2 has.
constexpr std::string_view kTekken =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// tiktoken's o200k_base (GPT-4o; llama.cpp's "gpt-4o", also Llama 4's): Tekken's word
// split, each word with an optional English contraction of any case, digits in threes.
constexpr std::string_view kO200k =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Moonshot's Kimi K2 and Moonlight (tokenization_kimi.py's pat_str): o200k's with runs of Han
// ideographs cut out first and kept out of the words, and without o200k's '/' after symbols.
// Its classes `[...&&[^\p{Han}]]` are intersections, which PCRE2 10.42 lacks: each letter
// is instead preceded by a lookahead that it is not Han. The tokenizer runs under Rust's
// regex crate, where \p{Han} is the Script property (PCRE2's bare \p{Han} is Script
// Extensions, which adds CJK punctuation such as 、。) at Unicode 15, where U+2B739 and
// Extension H are Han letters; Debian's PCRE2 tables (Unicode 14) leave them unassigned,
// so they are named where the expression names Han or letters.
constexpr std::string_view kKimiNewHan = R"re(\x{2B739}\x{31350}-\x{323AF})re";

std::string kimi_k2() {
  const std::string new_han(kKimiNewHan);
  const std::string han = R"re([\p{sc:Han})re" + new_han + "]";
  const std::string upper = "(?:(?!" + han + R"re()[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]))re";
  const std::string lower = "(?:(?!" + han + R"re()[\p{Ll}\p{Lm}\p{Lo}\p{M}]))re";
  const std::string lead = R"re([^\r\n\p{L})re" + new_han + R"re(\p{N}]?)re";
  const std::string contraction = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)?)re";
  return han + "+|" + lead + upper + "*" + lower + "+" + contraction + "|" + lead + upper + "+" +
         lower + "*" + contraction + R"re(|\p{N}{1,3}| ?[^\s\p{L})re" + new_han +
         R"re(\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
}

// DeepSeek LLM: the cased letters of the Latin, Greek, Cyrillic, Armenian,
// Georgian, Cherokee, Glagolitic, Coptic, Deseret, Osage, Old Hungarian,
// Warang Citi and Adlam scripts, written as code points so that no editor or
// normalizer can change them (several have canonical equivalents: U+2126 OHM
// SIGN is U+03A9 after NFC).
constexpr std::string_view kDeepseekLlmLetters =
    R"re(\s?[\x{41}-\x{5A}\x{61}-\x{7A}\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re";
// ASCII and full-width punctuation, curly quotes, ideographic space and marks.
constexpr std::string_view kDeepseekLlmPunctuation =
    R"re(\s?[\x{21}-\x{2F}\x{3A}-\x{7E}\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re";
// CJK ideographs (U+4E00..U+9FA5), U+0800..U+4E00 and Hangul syllables.
constexpr std::string_view kDeepseekCjk =
    R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";

// DeepSeek V3: digits in threes, CJK and kana runs, then a cl100k-like rest.
constexpr std::string_view kDeepseekV3Kana =
    R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re";
constexpr std::string_view kDeepseekV3Rest =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// BLOOM, Poro, GPT-3 Finnish: anything up to whitespace or sentence punctuation.
constexpr std::string_view kBloom =
    R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)re";

struct NamedSpec {
  std::vector<std::string_view> names; // names[0] is the canonical one
  PreTokenizerSpec spec;
};

const std::vector<NamedSpec>& specs() {
  static const std::string llama3 = cl100k_with_digits(R"re(\p{N}{1,3})re");
  static const std::string qwen2 = cl100k_with_digits(R"re(\p{N})re");
  static const std::string kimi = kimi_k2();
  static const std::vector<NamedSpec> table = [] {
    std::vector<NamedSpec> t;
    auto add = [&t](std::vector<std::string_view> names, std::vector<std::string_view> patterns,
                    bool ignore_merges = false, bool add_bos = false) {
      t.push_back({names, {names[0], std::move(patterns), ignore_merges, add_bos}});
    };
    // The fallback of llama.cpp, for files that name no pre-tokenizer.
    add({"default"}, {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"});
    add({"llama-bpe", "llama3", "llama-v3", "falcon3"}, {llama3}, true, true);
    add({"dbrx", "smaug-bpe", "chatglm-bpe", "glm4"}, {llama3});
    add({"qwen2", "stablelm2", "megrez", "hunyuan", "deepseek-r1-qwen", "kormo", "f2llmv2"},
        {qwen2});
    add({"qwen35"}, {kQwen35});
    add({"tekken"}, {kTekken}, true, true);
    add({"bailingmoe", "bailingmoe2", "llada-moe"}, {kBailing});
    add({"gpt-4o", "llama4"}, {kO200k});
    // tiktoken takes a piece that is a whole token as it is, before any merge (llama.cpp
    // merges these too; the two differ only where the merges do not rebuild a token).
    add({"kimi-k2"}, {kimi}, true);
    add({"gpt-2", "mpt", "olmo", "jais", "phi-2", "roberta-bpe", "gigachat", "jina-es", "jina-de",
         "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code", "trillion", "modern-bert"},
        {kGpt2});
    add({"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
        {R"re(\p{N})re", kGpt2});
    // Runs of punctuation first (with the ASCII symbols Rust counts as
    // punctuation), then GPT-2's expression, then digits in threes.
    add({"falcon"}, {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"});
    add({"deepseek-llm"}, {R"re([\r\n])re", kDeepseekLlmLetters, kDeepseekLlmPunctuation,
                           R"re(\s+$)re", kDeepseekCjk, R"re(\p{N}+)re"});
    add({"deepseek-coder"},
        {R"re([\r\n])re", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kDeepseekCjk, R"re(\p{N})re"});
    add({"deepseek-v3"}, {R"re(\p{N}{1,3})re", kDeepseekV3Kana, kDeepseekV3Rest});
    add({"bloom", "poro-chat", "gpt3-finnish"}, {kBloom});
    add({"viking"}, {kBloom, R"re(\p{N})re"});
    return t;
  }();
  return table;
}

} // namespace

const PreTokenizerSpec& find_pre_tokenizer(std::string_view pre, std::string* warning) {
  for (const NamedSpec& entry : specs())
    if (std::find(entry.names.begin(), entry.names.end(), pre) != entry.names.end())
      return entry.spec;
  const std::string reason = pre.empty() ? std::string("the file names no pre-tokenizer "
                                                       "(tokenizer.ggml.pre is absent)")
                                         : "tokenizer.ggml.pre \"" + std::string(pre) +
                                               "\" is not a pre-tokenizer pshard knows";
  *warning = reason + "; using the \"default\" one, so the text may be split into other tokens "
                      "than the model was trained with (re-convert the model with a current "
                      "llama.cpp converter to record its pre-tokenizer)";
  return specs().front().spec;
}

std::vector<std::string_view> known_pre_tokenizer_names() {
  std::vector<std::string_view> names;
  for (const NamedSpec& entry : specs())
    names.insert(names.end(), entry.names.begin(), entry.names.end());
  return names;
}

} // namespace pshard
