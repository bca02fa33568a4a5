// Vocabulary: the tokenizer.ggml.* metadata of a GGUF file, validated, in plain
// vectors. Tests build one in memory; load_vocabulary() reads it from a file.
//
//   Vocabulary vocab;
//   vocab.model = "llama";
//   vocab.tokens = {{"<unk>", 0.0f, TokenType::kUnknown}, {"▁a", -1.0f, TokenType::kNormal}};
//   vocab.unk_id = 0;
//   PSHARD_RETURN_IF_ERROR(validate_vocabulary(vocab));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

namespace gguf {
class GgufFile;
} // namespace gguf

// tokenizer.ggml.token_type values (SentencePiece's piece types).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct TokenData {
  std::string text;
  float score = 0.0f;
  TokenType type = TokenType::kNormal;
  // An added token that takes the whitespace before (lstrip) or after (rstrip)
  // it when cut out of text. GGUF does not store these; load_vocabulary() sets
  // them as llama.cpp does (runtime/tokenizer/token_overrides.h).
  bool lstrip = false;
  bool rstrip = false;
};

// Fill-in-the-middle markers (fim_tokens.h); kNoToken where the model has none.
struct FimTokens {
  TokenId prefix = kNoToken, suffix = kNoToken, middle = kNoToken;
  TokenId repo = kNoToken, file_sep = kNoToken; // repository-level context
};

struct Vocabulary {
  std::string model; // tokenizer.ggml.model: "llama", "gpt2", "bert", ...
  std::string pre;   // tokenizer.ggml.pre (empty when absent)
  std::vector<TokenData> tokens;
  // tokenizer.ggml.merges (byte-level BPE): "left right" pairs, the first
  // entry merged first.
  std::vector<std::string> merges;

  TokenId bos_id = kNoToken;
  TokenId eos_id = kNoToken;
  TokenId unk_id = kNoToken;
  TokenId pad_id = kNoToken;
  TokenId eot_id = kNoToken; // end of turn (chat models)
  TokenId eom_id = kNoToken; // end of message (tool use)
  FimTokens fim;

  bool add_bos = true;
  bool add_eos = false;
  bool add_space_prefix = true;
  // SentencePiece Unigram ("t5"): the normalization rules
  // (tokenizer.ggml.precompiled_charsmap, bytes; empty: none) and whether runs of
  // whitespace collapse (tokenizer.ggml.remove_extra_whitespaces).
  std::string precompiled_charsmap;
  bool remove_extra_whitespaces = false;

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
};

// Checks that every special id is kNoToken or in range and that the vocabulary
// is non-empty and fits in a TokenId.
Status validate_vocabulary(const Vocabulary &vocab);

// Reads tokenizer.ggml.* from `file` and validates it. scores and token_type are
// optional (0 and kNormal) but, when present, must be as long as tokens;
// merges is read when present (required by the "gpt2" tokenizer, not here).
// Special ids missing from the metadata default, for "llama", to the tokens
// named <s>, </s> and <unk> if the vocabulary has them ("t5": </s> and <unk>, no BOS,
// and <pad>); for "bert", BOS and EOS
// are cls_token_id and seperator_token_id (else [CLS] and [SEP]), the unknown
// token [UNK]. add_bos_token defaults to true for "llama" and "bert" and, for
// "gpt2", to what the pre-tokenizer's models use; add_eos_token to true for
// "bert" (its add_sep_token decides when present) and "t5".
// Then apply_token_overrides() marks chat and FIM tokens as llama.cpp does.
Result<Vocabulary> load_vocabulary(const gguf::GgufFile &file);

} // namespace pshard
