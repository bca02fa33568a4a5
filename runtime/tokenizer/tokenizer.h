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
// Implemented: "llama" (SentencePiece BPE: Llama 1/2, Mistral, Phi-3), "gpt2"
// (byte-level BPE: Llama 3, Qwen2/2.5/3, Mistral NeMo's Tekken, DeepSeek, GPT-2,
// Falcon, MPT, StarCoder, ...), "bert" (WordPiece: BERT, BGE, MiniLM, ...) and "t5"
// (SentencePiece Unigram: XLM-RoBERTa, bge-m3, multilingual-e5, T5). "rwkv" is reported
// as unsupported. Implementations are immutable after construction,
// so one tokenizer may be used from several threads at once.
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
  // BPE, "gpt2" = byte-level BPE, "bert" = WordPiece, "t5" = SentencePiece Unigram).
  // Other kinds ("rwkv", ...) give
  // kUnsupported naming the kind; inconsistent metadata (lengths that differ,
  // ids out of range, a merge without a space) gives kInvalidFormat naming the
  // key. Reads only metadata: a vocabulary-only GGUF is enough.
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const gguf::GgufFile &file);

  // Text -> ids. add_bos prepends BOS when the vocabulary has one (and appends
  // EOS when the metadata asks for it with tokenizer.ggml.add_eos_token); pass
  // add_bos_by_default() for what the model expects.
  // parse_special (the default, as in llama.cpp): text like "<s>" or
  // "<|im_end|>" matching a control token becomes that token; with false it is
  // tokenized as ordinary text. User-defined tokens are always matched whole.
  virtual std::vector<TokenId> encode(std::string_view text, bool add_bos,
                                      bool parse_special = true) const = 0;

  // The bytes of one token as text to show (SPM: "▁" -> " ", <0xAB> byte tokens
  // -> that single byte; byte-level BPE: "Ġ" -> " " and each character back to
  // its byte; WordPiece: "▁" -> " "; control tokens -> ""). A token may hold part of a multi-byte
  // UTF-8 character: stream through Utf8StreamBuffer. Out-of-range ids give "".
  virtual std::string token_to_piece(TokenId id) const = 0;

  // Whole-sequence decode: the pieces concatenated, control tokens dropped, and
  // (SPM, WordPiece) the leading space before the first piece removed.
  // WordPiece cannot give the text back: it lowercases and strips accents.
  // Byte-level BPE gives back exactly the bytes encode() read, parse_special or
  // not, unless the text held control-token text.
  virtual std::string decode(std::span<const TokenId> ids) const = 0;

  virtual int32_t n_vocab() const = 0;
  virtual TokenId bos() const = 0; // kNoToken (-1) if none
  virtual TokenId eos() const = 0; // kNoToken (-1) if none
  // tokenizer.ggml.add_bos_token; true for "llama" and "bert" when the key is
  // absent. (For "bert", BOS and EOS are [CLS] and [SEP]; "t5" says true when it adds
  // either, as T5 adds only EOS.)
  virtual bool add_bos_by_default() const = 0;
  // EOS, EOT/EOM and the usual end-of-turn control tokens.
  virtual bool is_end_of_generation(TokenId id) const = 0;

  // The metadata the tokenizer was built from (token texts and types).
  virtual const Vocabulary& vocabulary() const = 0;
  // Things a user should know about the vocabulary that did not stop loading,
  // one sentence each (an unknown tokenizer.ggml.pre, for one). The library
  // never prints them; tools do.
  virtual std::span<const std::string> warnings() const { return {}; }
};

} // namespace pshard
