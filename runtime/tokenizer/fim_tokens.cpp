#include "runtime/tokenizer/fim_tokens.h"

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

} // namespace

std::string_view fim_role_name(FimRole role) {
  switch (role) {
  case FimRole::kPrefix:
    return "prefix";
  case FimRole::kSuffix:
    return "suffix";
  case FimRole::kMiddle:
    return "middle";
  case FimRole::kRepo:
    return "repo";
  case FimRole::kFileSep:
    return "file separator";
  }
  return "?";
}

std::span<const char* const> fim_keys(FimRole role) {
  switch (role) {
  case FimRole::kPrefix:
    return kPrefixKeys;
  case FimRole::kSuffix:
    return kSuffixKeys;
  case FimRole::kMiddle:
    return kMiddleKeys;
  case FimRole::kRepo:
    return kRepoKeys;
  case FimRole::kFileSep:
    return kFileSepKeys;
  }
  return {};
}

std::span<const std::string_view> fim_marker_texts(FimRole role) {
  switch (role) {
  case FimRole::kPrefix:
    return kPrefixTexts;
  case FimRole::kSuffix:
    return kSuffixTexts;
  case FimRole::kMiddle:
    return kMiddleTexts;
  case FimRole::kRepo:
    return kRepoTexts;
  case FimRole::kFileSep:
    return kFileSepTexts;
  }
  return {};
}

TokenId find_fim_marker(const Vocabulary& vocab, FimRole role) {
  for (std::string_view text : fim_marker_texts(role))
    for (int32_t i = 0; i < vocab.size(); ++i)
      if (vocab.tokens[i].text == text)
        return i;
  return kNoToken;
}

TokenId& fim_id(FimTokens& fim, FimRole role) {
  switch (role) {
  case FimRole::kPrefix:
    return fim.prefix;
  case FimRole::kSuffix:
    return fim.suffix;
  case FimRole::kMiddle:
    return fim.middle;
  case FimRole::kRepo:
    return fim.repo;
  case FimRole::kFileSep:
    break;
  }
  return fim.file_sep;
}

TokenId fim_id(const FimTokens& fim, FimRole role) {
  FimTokens copy = fim;
  return fim_id(copy, role);
}

} // namespace pshard
