// The tokenizer's scalar metadata keys and how each is read: what llama.cpp's
// --override-kv may set for the tokenizer (runtime/model/hparam_overrides.h), e.g.
// tokenizer.ggml.add_bos_token=bool:false for a file converted with the wrong flag.
// The arrays (tokens, scores, merges, ...) are not overridable.
#pragma once

#include <string_view>

namespace pshard {

enum class TokenizerKeyKind {
  kFlag,    // a bool (--override-kv TYPE bool)
  kTokenId, // a token id, -1 for none (int)
  kText,    // a name (str)
};

struct TokenizerKey {
  std::string_view key;
  TokenizerKeyKind kind;
};

inline constexpr TokenizerKey kTokenizerScalarKeys[] = {
    {"tokenizer.ggml.add_bos_token", TokenizerKeyKind::kFlag},
    {"tokenizer.ggml.add_eos_token", TokenizerKeyKind::kFlag},
    {"tokenizer.ggml.add_sep_token", TokenizerKeyKind::kFlag},
    {"tokenizer.ggml.add_space_prefix", TokenizerKeyKind::kFlag},
    {"tokenizer.ggml.remove_extra_whitespaces", TokenizerKeyKind::kFlag},
    {"tokenizer.ggml.bos_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.eos_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.eot_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.eom_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.unknown_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.padding_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.seperator_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.cls_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.fim_pre_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.fim_suf_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.fim_mid_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.fim_rep_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.fim_sep_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.prefix_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.suffix_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.middle_token_id", TokenizerKeyKind::kTokenId},
    {"tokenizer.ggml.pre", TokenizerKeyKind::kText},
};

} // namespace pshard
