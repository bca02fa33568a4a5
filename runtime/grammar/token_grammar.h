// A grammar as a filter on a vocabulary's tokens: the tokens whose text keeps the
// generated text inside the grammar, and the end-of-generation tokens once the text
// is a whole sentence.
//
//   auto trie = TokenTrie::build(tokenizer);                    // once per vocabulary
//   PSHARD_ASSIGN_OR_RETURN(auto filter, GrammarTokenFilter::create(grammar, trie));
//   sampler.set_filter(filter);                                 // runtime/sampler/sampler.h
//
// Finding the allowed set walks a trie of every token's bytes through the grammar's
// automaton (grammar_matcher.h), pruning a branch as soon as its bytes leave the
// grammar. The automaton caches its transitions and the filter caches the set per
// automaton state, so the positions that recur (inside a JSON string, after a comma)
// cost nothing the second time.
#pragma once

#include "runtime/grammar/grammar_matcher.h"
#include "runtime/sampler/token_filter.h"
#include "runtime/tokenizer/tokenizer.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace pshard {

// Every token's text (Tokenizer::token_to_piece) in a byte trie, and the
// end-of-generation tokens. Tokens whose text is empty (control tokens) are not in
// the trie: a grammar never allows them. Immutable once built; share it.
class TokenTrie {
public:
  static std::shared_ptr<const TokenTrie> build(const Tokenizer& tokenizer);

  struct Node {
    int32_t first_child = -1;
    int32_t next_sibling = -1;
    int32_t tokens_begin = 0; // the tokens whose text ends here: tokens[begin, end)
    int32_t tokens_end = 0;
    uint8_t byte = 0;
  };
  const std::vector<Node>& nodes() const { return nodes_; } // [0] is the root
  const std::vector<TokenId>& tokens() const { return tokens_; }
  const std::vector<std::string>& pieces() const { return pieces_; } // by token id
  const std::vector<TokenId>& end_of_generation() const { return eog_; }
  int32_t n_vocab() const { return static_cast<int32_t>(pieces_.size()); }

private:
  std::vector<Node> nodes_;
  std::vector<TokenId> tokens_;
  std::vector<std::string> pieces_;
  std::vector<TokenId> eog_;
};

class GrammarTokenFilter final : public TokenFilter {
public:
  static Result<std::shared_ptr<GrammarTokenFilter>>
  create(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie);

  bool allows(TokenId id) override;
  std::span<const uint64_t> allowed() override;
  Status accept(TokenId id) override;
  // Moves past text that did not come as one token (what followed a trigger).
  Status accept_text(std::string_view text);

  // The text so far is a whole sentence and nothing may follow it.
  bool finished() const { return matcher_.can_end() && !matcher_.can_continue(); }
  const GrammarMatcher& matcher() const { return matcher_; }

private:
  GrammarTokenFilter(std::shared_ptr<const Grammar> grammar,
                     std::shared_ptr<const TokenTrie> trie);
  bool is_end_of_generation(TokenId id) const;
  std::vector<uint64_t> compute_allowed();

  // The sets kept per state; past this many, they are dropped and built again.
  static constexpr size_t kMaxCachedSets = 256;

  GrammarMatcher matcher_;
  std::shared_ptr<const TokenTrie> trie_;
  std::unordered_map<GrammarMatcher::State, std::vector<uint64_t>> sets_;
  uint64_t sets_epoch_ = 0;
};

} // namespace pshard
