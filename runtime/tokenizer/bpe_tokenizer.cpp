#include "runtime/tokenizer/bpe_tokenizer.h"

#include "runtime/tokenizer/byte_unicode.h"

#include <algorithm>
#include <cstdio>

namespace pshard {
namespace {

constexpr int32_t kMergedAway = -2; // a symbol id no merge and no token has

// One symbol of a piece being merged: its id, its neighbours in the list, and
// the bytes of the piece it covers.
struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  size_t begin;
  size_t end;
};

// A merge that was possible when queued. Symbols only grow, so if either side
// has changed since (its id differs), the entry is stale and skipped.
struct Candidate {
  int32_t rank;
  int32_t left;
  int32_t right;
  int32_t left_id;
  int32_t right_id;
  int32_t result;
};

// std::push_heap keeps the greatest on top: make that the lowest rank, then
// the leftmost pair.
bool later(const Candidate& a, const Candidate& b) {
  return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
}

// Working storage reused from piece to piece and call to call, one per thread
// (encode() may run on several threads at once).
struct Scratch {
  std::vector<std::string_view> pieces;
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string word;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

std::string missing_bytes_warning(const BpeMerges& merges) {
  int missing = 0;
  int first = -1;
  for (int b = 0; b < 256; ++b)
    if (merges.token(merges.byte_symbol(static_cast<uint8_t>(b))) == kNoToken) {
      ++missing;
      first = first < 0 ? b : first;
    }
  if (missing == 0)
    return {};
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", first);
  return "the vocabulary has no token for " + std::to_string(missing) +
         " of the 256 byte values (the first is " + hex +
         "); text containing them loses those bytes";
}

} // namespace

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::create(Vocabulary vocab) {
  PSHARD_RETURN_IF_ERROR(validate_vocabulary(vocab));
  if (vocab.merges.empty())
    return invalid_format("tokenizer.ggml.merges is missing or empty; a byte-level BPE "
                          "(\"gpt2\") vocabulary needs its merges (re-convert the model)");
  std::string warning;
  const PreTokenizerSpec& spec = find_pre_tokenizer(vocab.pre, &warning);
  PSHARD_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::create(spec.patterns));
  auto tok =
      std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(vocab), spec, std::move(pre)));
  PSHARD_RETURN_IF_ERROR(tok->merges_.build(tok->vocab_));
  if (!warning.empty())
    tok->warnings_.push_back(std::move(warning));
  if (std::string missing = missing_bytes_warning(tok->merges_); !missing.empty())
    tok->warnings_.push_back(std::move(missing));
  return tok;
}

BpeTokenizer::BpeTokenizer(Vocabulary vocab, const PreTokenizerSpec& spec, PreTokenizer pre)
    : VocabularyTokenizer(std::move(vocab)), spec_(&spec), pre_(std::move(pre)), specials_(vocab_) {
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  return encode_around_specials(
      specials_, text, add_bos, parse_special,
      [this](std::string_view run, bool, std::vector<TokenId>& out) { encode_text(run, out); });
}

void BpeTokenizer::encode_text(std::string_view text, std::vector<TokenId>& out) const {
  std::vector<std::string_view>& pieces = scratch().pieces;
  pieces.clear();
  pre_.split(text, pieces);
  for (std::string_view piece : pieces)
    encode_piece(piece, out);
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.empty())
    return;
  Scratch& work = scratch();
  if (spec_->ignore_merges) {
    work.word.clear();
    append_byte_level(piece, work.word);
    if (const TokenId whole = merges_.token(merges_.symbol(work.word)); whole != kNoToken) {
      out.push_back(whole);
      return;
    }
  }

  std::vector<Symbol>& symbols = work.symbols;
  std::vector<Candidate>& heap = work.heap;
  symbols.clear();
  heap.clear();
  for (size_t i = 0; i < piece.size(); ++i)
    symbols.push_back({merges_.byte_symbol(static_cast<uint8_t>(piece[i])),
                       static_cast<int32_t>(i) - 1, static_cast<int32_t>(i) + 1, i, i + 1});
  symbols.back().next = -1;

  auto try_queue = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0)
      return;
    if (const BpeMerges::Merge* merge = merges_.find(symbols[left].id, symbols[right].id)) {
      heap.push_back(
          {merge->rank, left, right, symbols[left].id, symbols[right].id, merge->result});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i)
    try_queue(i, i + 1);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate c = heap.back();
    heap.pop_back();
    Symbol& left = symbols[c.left];
    Symbol& right = symbols[c.right];
    if (left.id != c.left_id || right.id != c.right_id)
      continue; // stale
    left.id = c.result;
    left.end = right.end;
    left.next = right.next;
    right.id = kMergedAway;
    if (right.next >= 0)
      symbols[right.next].prev = c.left;
    try_queue(left.prev, c.left);
    try_queue(c.left, left.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    if (const TokenId token = merges_.token(s.id); token != kNoToken) {
      out.push_back(token);
      continue;
    }
    // Not a token (a merge result the vocabulary lacks, or a byte without a
    // symbol): its bytes one by one, or the unknown token for a missing byte.
    for (size_t b = s.begin; b < s.end; ++b) {
      const TokenId byte_token = merges_.token(merges_.byte_symbol(static_cast<uint8_t>(piece[b])));
      if (byte_token != kNoToken)
        out.push_back(byte_token);
      else if (vocab_.unk_id != kNoToken)
        out.push_back(vocab_.unk_id);
    }
  }
}

std::string BpeTokenizer::token_to_piece(TokenId id) const {
  if (id < 0 || id >= vocab_.size())
    return {};
  const TokenData& token = vocab_.tokens[id];
  switch (token.type) {
  case TokenType::kNormal: {
    std::string piece;
    piece.reserve(token.text.size());
    append_from_byte_level(token.text, piece);
    return piece;
  }
  case TokenType::kUserDefined: // stored as the text itself, not byte-level
    return token.text;
  default: // control, unknown, unused: nothing to show
    return {};
  }
}

std::string BpeTokenizer::decode(std::span<const TokenId> ids) const {
  return join_pieces(ids, /*drop_first_space=*/false);
}

} // namespace pshard
