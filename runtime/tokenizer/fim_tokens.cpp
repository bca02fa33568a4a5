#include "runtime/tokenizer/fim_tokens.h"

#include <iterator>

namespace pshard {
namespace {

constexpr const char* kPrefixKeys[] = {"tokenizer.ggml.fim_pre_token_id",
                                       "tokenizer.ggml.prefix_token_id"};
constexpr const char* kSuffixKeys[] = {"tokenizer.ggml.fim_suf_token_id",
                                       "tokenizer.ggml.suffix_token_id"};
constexpr const char* kMiddleKeys[] = {"tokenizer.ggml.fim_mid_token_id",
                                       "tokenizer.ggml.middle_token_id"};
constexpr const char* kRepoKeys[] = {"tokenizer.ggml.fim_rep_token_id"};
constexpr const char* kFileSepKeys[] = {"tokenizer.ggml.fim_sep_token_id"};

// Qwen2.5-Coder / StarCoder2 "<|fim_prefix|>", StarCoder "<fim_prefix>", Santacoder
// "<fim-prefix>", DeepSeek-Coder "<｜fim▁begin｜>", CodeLlama "<PRE>" (SentencePiece
// may store it with its word-start mark), GLM "<|code_prefix|>".
constexpr std::string_view kPrefixTexts[] = {"<|fim_prefix|>",
                                             "<fim_prefix>",
                                             "<fim-prefix>",
                                             "<\xef\xbd\x9c"
                                             "fim\xe2\x96\x81"
                                             "begin\xef\xbd\x9c>",
                                             "<PRE>",
                                             "\xe2\x96\x81<PRE>",
                                             "<|code_prefix|>"};
constexpr std::string_view kSuffixTexts[] = {"<|fim_suffix|>",
                                             "<fim_suffix>",
                                             "<fim-suffix>",
                                             "<\xef\xbd\x9c"
                                             "fim\xe2\x96\x81"
                                             "hole\xef\xbd\x9c>",
                                             "<SUF>",
                                             "\xe2\x96\x81<SUF>",
                                             "<|code_suffix|>"};
constexpr std::string_view kMiddleTexts[] = {"<|fim_middle|>",
                                             "<fim_middle>",
                                             "<fim-middle>",
                                             "<\xef\xbd\x9c"
                                             "fim\xe2\x96\x81"
                                             "end\xef\xbd\x9c>",
                                             "<MID>",
                                             "\xe2\x96\x81<MID>",
                                             "<|code_middle|>"};
constexpr std::string_view kRepoTexts[] = {"<|repo_name|>", "<|fim_repo|>", "<reponame>", "<REPO>"};
constexpr std::string_view kFileSepTexts[] = {"<|file_sep|>", "<|fim_sep|>", "<file_sep>",
                                              "<filename>"};

// Each role's facts, in FimRole's order.
struct RoleFacts {
  std::string_view name;
  std::span<const char* const> keys;
  std::span<const std::string_view> texts;
  TokenId FimTokens::*id;
};
constexpr RoleFacts kFacts[] = {
    {"prefix", kPrefixKeys, kPrefixTexts, &FimTokens::prefix},
    {"suffix", kSuffixKeys, kSuffixTexts, &FimTokens::suffix},
    {"middle", kMiddleKeys, kMiddleTexts, &FimTokens::middle},
    {"repo", kRepoKeys, kRepoTexts, &FimTokens::repo},
    {"file separator", kFileSepKeys, kFileSepTexts, &FimTokens::file_sep}};

const RoleFacts& facts(FimRole role) { return kFacts[static_cast<size_t>(role)]; }

} // namespace

std::string_view fim_role_name(FimRole role) { return facts(role).name; }
std::span<const char* const> fim_keys(FimRole role) { return facts(role).keys; }

void find_fim_markers(const Vocabulary& vocab, FimTokens& fim) {
  constexpr size_t kRoles = std::size(kFacts);
  size_t rank[kRoles]; // of the text found so far for each role still to find
  bool open[kRoles];
  for (size_t r = 0; r < kRoles; ++r) {
    rank[r] = kFacts[r].texts.size();
    open[r] = fim.*kFacts[r].id == kNoToken;
  }
  for (int32_t i = 0; i < vocab.size(); ++i) {
    const std::string& text = vocab.tokens[i].text;
    // Every marker begins with '<' or SentencePiece's word-start mark (0xE2 ...): the
    // rest of a large vocabulary is passed over on one byte.
    if (text.empty() || (text[0] != '<' && text[0] != '\xe2'))
      continue;
    for (size_t r = 0; r < kRoles; ++r)
      for (size_t k = 0; open[r] && k < rank[r]; ++k)
        if (text == kFacts[r].texts[k]) {
          rank[r] = k;
          fim.*kFacts[r].id = i;
        }
  }
}

TokenId& fim_id(FimTokens& fim, FimRole role) { return fim.*facts(role).id; }
TokenId fim_id(const FimTokens& fim, FimRole role) { return fim.*facts(role).id; }

} // namespace pshard
