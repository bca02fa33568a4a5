// libFuzzer target for the tokenizers: any bytes must encode, with and without
// parsing control tokens, into ids inside the vocabulary, without crashing; and
// where the vocabulary promises it the text must come back:
//   - byte-level BPE, parse_special off: decode(encode(x)) == x exactly, and
//     streaming the pieces through Utf8StreamBuffer gives the same bytes;
//   - SentencePiece without added tokens (llama-spm), parse_special off, text
//     without U+2581 (which SentencePiece reads as a space): the same;
//   - WordPiece, parse_special off, ids without the unknown token: the decoded
//     text (lowercased, accents gone) encodes to the same ids;
//   - Unigram with byte fallback, no rules, whitespace kept and no dummy prefix,
//     parse_special off, valid UTF-8 without U+2581: the text back.
// The vocabularies are five small ones built here (so the target runs anywhere)
// and, when PSHARD_SHARED_DIR holds them, llama-spm, GPT-2, Qwen2 and BERT's (BGE).
// A broken promise traps, so the fuzzer reports it.
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/bpe_tokenizer.h"
#include "runtime/tokenizer/spm_tokenizer.h"
#include "runtime/tokenizer/ugm_tokenizer.h"
#include "runtime/tokenizer/utf8.h"
#include "runtime/tokenizer/wpm_tokenizer.h"
#include "tests/runtime/tokenizer/byte_level_vocab.h"
#include "tests/runtime/tokenizer/byte_pieces.h"
#include "tests/runtime/tokenizer/unigram_vocab.h"
#include "tests/runtime/tokenizer/wordpiece_vocab.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace pshard;

void check(bool promise) {
  if (!promise)
    __builtin_trap();
}

enum class Promise { kNone, kBytesBack, kSpmTextBack, kWordPieceIdsBack, kUnigramTextBack };

struct Target {
  std::unique_ptr<Tokenizer> tokenizer;
  Promise promise = Promise::kNone;
};

std::vector<Target>& targets() {
  static std::vector<Target> all;
  return all;
}

// Byte tokens, a few merges building " the" and "ing", a control and a
// user-defined token; Llama 3's pre-tokenizer (ignore_merges on).
std::unique_ptr<Tokenizer> small_bpe() {
  Vocabulary v;
  v.model = "gpt2";
  v.pre = "llama-bpe";
  v.tokens = testing_vocab::byte_level_alphabet();
  for (const char* merged : {"\xC4\xA0t", "th", "\xC4\xA0th", "\xC4\xA0the", "in", "ing"})
    v.tokens.push_back({merged});
  v.merges = {"\xC4\xA0 t", "t h", "\xC4\xA0t h", "\xC4\xA0th e", "i n", "in g", "x y"};
  v.tokens.push_back({"<|endoftext|>", 0, TokenType::kControl});
  v.tokens.push_back({"<tool>", 0, TokenType::kUserDefined});
  v.eos_id = v.size() - 2;
  auto tok = BpeTokenizer::create(std::move(v));
  check(tok.ok());
  return std::move(tok).value();
}

// Byte tokens, a few pieces, <s> </s> and a user-defined token.
std::unique_ptr<Tokenizer> small_spm() {
  Vocabulary v;
  v.model = "llama";
  v.tokens = {{"<unk>", 0, TokenType::kUnknown},
              {"<s>", 0, TokenType::kControl},
              {"</s>", 0, TokenType::kControl},
              {"<|u|>", 0, TokenType::kUserDefined}};
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  testing_vocab::append_byte_pieces(v);
  const std::pair<const char*, float> pieces[] = {{"\xE2\x96\x81", -1},
                                                  {"a", -2},
                                                  {"b", -2},
                                                  {"\xE2\x96\x81"
                                                   "a",
                                                   -1.5f},
                                                  {"ab", -1}};
  for (const auto& [text, score] : pieces)
    v.tokens.push_back({text, score, TokenType::kNormal});
  auto tok = SpmTokenizer::create(std::move(v));
  check(tok.ok());
  return std::move(tok).value();
}

// BERT's control tokens, a few word-initial and inner pieces, a CJK and a punctuation
// piece, a jamo.
std::unique_ptr<Tokenizer> small_wpm() {
  Vocabulary v = testing_vocab::wordpiece_vocab({"\xE2\x96\x81" "a", "\xE2\x96\x81" "ab", "b", "ba",
                                                 "\xE2\x96\x81" ",", "\xE2\x96\x81" "\xE6\x88\x91",
                                                 "\xE1\x84\x92", "e"});
  auto tok = WpmTokenizer::create(std::move(v));
  check(tok.ok());
  return std::move(tok).value();
}

// Unigram: pieces that overlap in several ways; `lossless` keeps whitespace, adds no
// prefix and has byte fallback, the other has XLM-RoBERTa's options and a charsmap.
std::unique_ptr<Tokenizer> small_ugm(bool lossless) {
  Vocabulary v = testing_vocab::unigram_vocab({{"\xE2\x96\x81", -2},
                                               {"a", -3},
                                               {"b", -3},
                                               {"ab", -2.5f},
                                               {"\xE2\x96\x81"
                                                "a",
                                                -2},
                                               {"\xE2\x96\x81"
                                                "ab",
                                                -4},
                                               {"\xE6\x88\x91", -5}},
                                              /*with_bytes=*/lossless);
  if (lossless) {
    v.remove_extra_whitespaces = false;
    v.add_space_prefix = false;
  } else {
    v.precompiled_charsmap = testing_vocab::hand_built_charsmap();
  }
  auto tok = UgmTokenizer::create(std::move(v));
  check(tok.ok());
  return std::move(tok).value();
}

void add_shared(const char* name, Promise promise) {
#ifdef PSHARD_SHARED_DIR
  const std::string path = std::string(PSHARD_SHARED_DIR) + "/vocab/ggml-vocab-" + name + ".gguf";
  if (!std::filesystem::exists(path))
    return;
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  check(file.ok());
  auto tok = Tokenizer::from_gguf(**file);
  check(tok.ok());
  targets().push_back({std::move(tok).value(), promise});
#endif
}

bool has_space_marker(std::string_view text) {
  return text.find("\xE2\x96\x81") != std::string_view::npos;
}

void exercise(const Target& target, std::string_view text, bool add_bos) {
  const Tokenizer& tok = *target.tokenizer;
  for (bool parse_special : {true, false}) {
    const std::vector<TokenId> ids = tok.encode(text, add_bos, parse_special);
    for (TokenId id : ids)
      check(id >= 0 && id < tok.n_vocab());
    const std::string decoded = tok.decode(ids);
    if (parse_special)
      continue;
    switch (target.promise) {
    case Promise::kBytesBack: {
      check(decoded == text);
      Utf8StreamBuffer stream;
      std::string streamed;
      for (TokenId id : ids)
        streamed += stream.push(tok.token_to_piece(id));
      streamed += stream.flush();
      check(streamed == decoded);
      break;
    }
    case Promise::kSpmTextBack:
      check(has_space_marker(text) || decoded == text);
      break;
    case Promise::kWordPieceIdsBack: {
      const TokenId unknown = tok.vocabulary().unk_id;
      if (std::find(ids.begin(), ids.end(), unknown) == ids.end())
        check(tok.encode(decoded, add_bos, false) == ids);
      break;
    }
    case Promise::kUnigramTextBack:
      check(!is_valid_utf8(text) || has_space_marker(text) || decoded == text);
      break;
    case Promise::kNone:
      break;
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  targets().push_back({small_bpe(), Promise::kBytesBack});
  targets().push_back({small_spm(), Promise::kNone});
  targets().push_back({small_wpm(), Promise::kWordPieceIdsBack});
  targets().push_back({small_ugm(/*lossless=*/true), Promise::kUnigramTextBack});
  targets().push_back({small_ugm(/*lossless=*/false), Promise::kNone});
  add_shared("llama-spm", Promise::kSpmTextBack);
  add_shared("gpt-2", Promise::kBytesBack);
  add_shared("qwen2", Promise::kBytesBack);
  add_shared("bert-bge", Promise::kWordPieceIdsBack);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  // The first byte picks BOS on or off, so the rest is the text as given.
  const bool add_bos = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (const Target& target : targets())
    exercise(target, text, add_bos);
  return 0;
}
