// Fill-in-the-middle markers of code models: the prompt
//   [repo]name\n [file_sep]path\ncontent\n ... [prefix]before[suffix]after[middle]
// asks the model for what goes between `before` and `after` (Qwen2.5-Coder, StarCoder,
// CodeLlama, DeepSeek-Coder, Codestral). GGUF files record them as
// tokenizer.ggml.fim_{pre,suf,mid,rep,sep}_token_id (older files: prefix_, suffix_,
// middle_token_id); files that do not are read by the markers' texts, as llama.cpp does.
#pragma once

#include "runtime/tokenizer/vocabulary.h"

#include <span>
#include <string_view>

namespace pshard {

enum class FimRole { kPrefix, kSuffix, kMiddle, kRepo, kFileSep };
inline constexpr FimRole kFimRoles[] = {FimRole::kPrefix, FimRole::kSuffix, FimRole::kMiddle,
                                        FimRole::kRepo, FimRole::kFileSep};

// "prefix", "suffix", ... for messages.
std::string_view fim_role_name(FimRole role);
// The metadata keys of a role, the current one first.
std::span<const char* const> fim_keys(FimRole role);
// Gives every role of `fim` still kNoToken the vocabulary's token whose text is one of
// the role's marker texts in the families that have one (the text listed first where a
// vocabulary has several), reading the vocabulary once.
void find_fim_markers(const Vocabulary& vocab, FimTokens& fim);

TokenId& fim_id(FimTokens& fim, FimRole role);
TokenId fim_id(const FimTokens& fim, FimRole role);

} // namespace pshard
