// A small SentencePiece-style vocabulary for generated models that were given no
// tokenizer to copy: control tokens, the 256 byte-fallback tokens, printable ASCII
// with and without the word-start marker, then filler pieces up to the size asked, the
// last ids going to any extra control tokens ("<|fim_prefix|>"), then user-defined ones
// (Qwen3's "<think>", which a converter types user-defined: its text is shown).
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_writer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

inline constexpr int64_t kMinSyntheticVocab = 3 + 256 + 2 * 95;

Status add_synthetic_vocab(int64_t n_vocab, const std::vector<std::string>& control_tokens,
                           const std::vector<std::string>& user_tokens, gguf::GgufWriter& writer);

// Copies every tokenizer.* key of `path`; returns the vocabulary size.
Result<int64_t> copy_tokenizer(const std::string& path, gguf::GgufWriter& writer);

} // namespace pshard
