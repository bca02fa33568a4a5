#include "runtime/tokenizer/spm_tokenizer.h"

#include "runtime/tokenizer/sentencepiece_pieces.h"
#include "runtime/tokenizer/space_marker.h"
#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <queue>

namespace pshard {
namespace {

bool is_mergeable(TokenType type) {
  return type == TokenType::kNormal || type == TokenType::kUserDefined ||
         type == TokenType::kUndefined;
}

// One symbol of the BPE working list: a span of the escaped text, linked to its
// neighbours. A symbol merged into its left neighbour gets length 0.
struct Symbol {
  int prev;
  int next;
  size_t start;
  size_t length;
};

// A candidate merge of symbols `left` and `left`'s successor. `length` is the
// pair's combined length when queued: if either side changed since, the entry
// is stale and skipped (symbols only grow, merged-away ones become 0).
struct Bigram {
  float score;
  int left;
  int right;
  size_t length;
};

// Highest score first; on equal scores the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram &a, const Bigram &b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

} // namespace

Result<std::unique_ptr<SpmTokenizer>> SpmTokenizer::create(Vocabulary vocab) {
  PSHARD_RETURN_IF_ERROR(validate_vocabulary(vocab));
  return std::unique_ptr<SpmTokenizer>(new SpmTokenizer(std::move(vocab)));
}

SpmTokenizer::SpmTokenizer(Vocabulary vocab)
    : SentencePieceTokenizer(std::move(vocab)), byte_tokens_(byte_tokens(vocab_)),
      specials_(vocab_) {
  pieces_.reserve(vocab_.tokens.size());
  for (TokenId id = 0; id < vocab_.size(); ++id) {
    const TokenData &token = vocab_.tokens[id];
    if (is_mergeable(token.type))
      pieces_.emplace(token.text, id); // the first of duplicate texts wins
  }
  // Whether no piece holds a space marker right after something else: then no merge can
  // join the text before a run of markers to the run, and each word (a run of markers and
  // what follows up to the next run) merges alone — the same pieces, since merges in
  // different words never compete, in heaps of a word instead of the whole text.
  splits_at_spaces_ = true;
  for (const auto& [piece, id] : pieces_)
    for (size_t at = piece.find(kSpaceMarker, 1); at != std::string_view::npos;
         at = piece.find(kSpaceMarker, at + 1))
      if (at < kSpaceMarker.size() ||
          piece.substr(at - kSpaceMarker.size(), kSpaceMarker.size()) != kSpaceMarker)
        splits_at_spaces_ = false;
}

std::vector<TokenId> SpmTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  // The space prefix goes at the start of the text and after every added token, as
  // SentencePiece sees each run between them as a text of its own.
  return encode_around_specials(
      specials_, text, add_bos, parse_special,
      [this](std::string_view run, bool starts_text, std::vector<TokenId> &out) {
        encode_text(run, vocab_.add_space_prefix && starts_text, out);
      });
}

void SpmTokenizer::encode_text(std::string_view text, bool space_prefix,
                               std::vector<TokenId> &out) const {
  std::string escaped;
  escaped.reserve(text.size() + kSpaceMarker.size() * 4);
  if (space_prefix)
    escaped.append(kSpaceMarker);
  for (char c : text) {
    if (c == ' ')
      escaped.append(kSpaceMarker);
    else
      escaped.push_back(c);
  }

  const std::string_view view = escaped;
  if (!splits_at_spaces_)
    return merge_and_emit(view, out);
  size_t word = 0; // each word starts at a run of space markers
  for (size_t at = view.find(kSpaceMarker, 1); at != std::string_view::npos;
       at = view.find(kSpaceMarker, at + kSpaceMarker.size())) {
    if (at >= kSpaceMarker.size() &&
        view.substr(at - kSpaceMarker.size(), kSpaceMarker.size()) == kSpaceMarker)
      continue; // inside a run
    merge_and_emit(view.substr(word, at - word), out);
    word = at;
  }
  merge_and_emit(view.substr(word), out);
}

void SpmTokenizer::merge_and_emit(std::string_view view, std::vector<TokenId>& out) const {
  std::vector<Symbol> symbols;
  symbols.reserve(view.size());
  for (size_t pos = 0; pos < view.size();) {
    // A malformed byte is a symbol of its own: were it to take the bytes after
    // it (as its lead bits promise, and llama.cpp lets it), it could swallow
    // part of a "▁" and the space would not decode back.
    size_t length = 0;
    decode_utf8(view, pos, &length);
    length = std::max<size_t>(length, 1);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, pos, length});
    pos += length;
  }
  if (symbols.empty())
    return;
  symbols.back().next = -1;

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_queue = [&](int left, int right) {
    if (left < 0 || right < 0)
      return;
    const size_t length = symbols[left].length + symbols[right].length;
    const auto found = pieces_.find(view.substr(symbols[left].start, length));
    if (found != pieces_.end())
      queue.push({vocab_.tokens[found->second].score, left, right, length});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i)
    try_queue(i, i + 1);

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol &left = symbols[bigram.left];
    Symbol &right = symbols[bigram.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length)
      continue; // stale: one side merged with something else since
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = bigram.left;
    try_queue(left.prev, bigram.left);
    try_queue(bigram.left, left.next);
  }

  for (int i = 0; i >= 0; i = symbols[i].next)
    emit_symbol(view.substr(symbols[i].start, symbols[i].length), out);
}

void SpmTokenizer::emit_symbol(std::string_view symbol, std::vector<TokenId> &out) const {
  if (const auto found = pieces_.find(symbol); found != pieces_.end()) {
    out.push_back(found->second);
    return;
  }
  if (!emit_bytes(symbol, byte_tokens_, out) && vocab_.unk_id != kNoToken)
    out.push_back(vocab_.unk_id);
}

} // namespace pshard
