// Tokenizer: text <-> token ids, built from a GGUF file's tokenizer.ggml.* metadata.
//
// Usage:
//   PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly));
//   PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok, Tokenizer::from_gguf(*file));
//   std::vector<TokenId> ids = tok->encode("Once upon a time", tok->add_bos_by_default());
//   ...
//   Utf8StreamBuffer out;                        // runtime/tokenizer/utf8.h
//   std::cout << out.push(tok->token_to_piece(next_id));   // streaming, piece by piece
//
// Only "llama" (SentencePiece BPE) is implemented; "gpt2" (byte-level BPE) and
// "bert" (WordPiece) are reported as unsupported and slot in behind the same
// interface. Implementations are immutable after construction, so one tokenizer
// may be used from several threads at once.
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

namespace gguf {
class GgufFile;
} // namespace gguf

struct Vocabulary; // runtime/tokenizer/vocabulary.h

class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  // Builds the tokenizer named by tokenizer.ggml.model ("llama" = SentencePiece
  // BPE). Other kinds ("gpt2", "bert", ...) give kUnsupported naming the kind;
  // inconsistent metadata (lengths that differ, ids out of range) gives
  // kInvalidFormat naming the key.
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const gguf::GgufFile &file);

  // Text -> ids. add_bos prepends BOS when the vocabulary has one (and appends
  // EOS when the metadata asks for it with tokenizer.ggml.add_eos_token).
  // parse_special: text like "<s>" or "</s>" matching a control token becomes
  // that token; otherwise it is tokenized as ordinary text. User-defined tokens
  // are always matched whole.
  virtual std::vector<TokenId> encode(std::string_view text, bool add_bos,
                                      bool parse_special = false) const = 0;

  // The bytes of one token as text to show (SPM: "▁" -> " ", <0xAB> byte tokens
  // -> that single byte, control tokens -> ""). A byte token may be part of a
  // multi-byte UTF-8 character: stream through Utf8StreamBuffer. Out-of-range
  // ids give "".
  virtual std::string token_to_piece(TokenId id) const = 0;

  // Whole-sequence decode: the pieces concatenated, control tokens dropped, and
  // the leading space SPM adds at the start of the text removed.
  virtual std::string decode(std::span<const TokenId> ids) const = 0;

  virtual int32_t n_vocab() const = 0;
  virtual TokenId bos() const = 0; // kNoToken (-1) if none
  virtual TokenId eos() const = 0; // kNoToken (-1) if none
  // tokenizer.ggml.add_bos_token; true for "llama" when the key is absent.
  virtual bool add_bos_by_default() const = 0;
  // EOS, EOT/EOM and the usual end-of-turn control tokens.
  virtual bool is_end_of_generation(TokenId id) const = 0;
};

} // namespace pshard
