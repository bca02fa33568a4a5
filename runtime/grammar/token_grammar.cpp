#include "runtime/grammar/token_grammar.h"

#include <algorithm>
#include <numeric>

namespace pshard {

std::shared_ptr<const TokenTrie> TokenTrie::build(const Tokenizer& tokenizer) {
  auto trie = std::make_shared<TokenTrie>();
  const int32_t n = tokenizer.n_vocab();
  trie->pieces_.resize(static_cast<size_t>(n));
  std::vector<TokenId> order;
  for (TokenId id = 0; id < n; ++id) {
    if (tokenizer.is_end_of_generation(id))
      trie->eog_.push_back(id);
    trie->pieces_[id] = tokenizer.token_to_piece(id);
    if (!trie->pieces_[id].empty())
      order.push_back(id);
  }
  const auto& pieces = trie->pieces_;
  std::stable_sort(order.begin(), order.end(),
                   [&](TokenId a, TokenId b) { return pieces[a] < pieces[b]; });
  // Sorted texts share prefixes with their neighbours: keep the path of the last one
  // and branch off where the next differs. Children come out in byte order.
  auto& nodes = trie->nodes_;
  nodes.emplace_back();
  std::vector<int32_t> path{0};     // path[d]: the node for the first d bytes
  std::vector<int32_t> last_child{-1}; // per path node, its last child so far
  for (TokenId id : order) {
    const std::string& text = pieces[id];
    size_t depth = 0;
    while (depth + 1 < path.size() && depth < text.size() &&
           nodes[path[depth + 1]].byte == static_cast<uint8_t>(text[depth]))
      ++depth;
    path.resize(depth + 1);
    last_child.resize(depth + 1);
    for (; depth < text.size(); ++depth) {
      const auto child = static_cast<int32_t>(nodes.size());
      nodes.emplace_back();
      nodes[child].byte = static_cast<uint8_t>(text[depth]);
      const int32_t parent = path[depth];
      if (last_child[depth] < 0)
        nodes[parent].first_child = child;
      else
        nodes[last_child[depth]].next_sibling = child;
      last_child[depth] = child;
      path.push_back(child);
      last_child.push_back(-1);
    }
    // Equal texts are adjacent, so a node's tokens are one run.
    Node& end = nodes[path.back()];
    if (end.tokens_begin == end.tokens_end)
      end.tokens_begin = static_cast<int32_t>(trie->tokens_.size());
    trie->tokens_.push_back(id);
    end.tokens_end = static_cast<int32_t>(trie->tokens_.size());
  }
  return trie;
}

Result<std::shared_ptr<GrammarTokenFilter>>
GrammarTokenFilter::create(std::shared_ptr<const Grammar> grammar,
                           std::shared_ptr<const TokenTrie> trie) {
  if (!grammar || !trie)
    return invalid_argument("a grammar filter needs a grammar and a vocabulary");
  std::shared_ptr<GrammarTokenFilter> f(new GrammarTokenFilter(std::move(grammar), std::move(trie)));
  if (f->matcher_.state() == GrammarMatcher::kDead)
    return invalid_argument("the grammar's root is too ambiguous to follow (over " +
                            std::to_string(GrammarMatcher::kMaxStacks) + " readings at once)");
  return f;
}

GrammarTokenFilter::GrammarTokenFilter(std::shared_ptr<const Grammar> grammar,
                                       std::shared_ptr<const TokenTrie> trie)
    : matcher_(std::move(grammar)), trie_(std::move(trie)) {}

bool GrammarTokenFilter::is_end_of_generation(TokenId id) const {
  const auto& eog = trie_->end_of_generation();
  return std::find(eog.begin(), eog.end(), id) != eog.end();
}

bool GrammarTokenFilter::allows(TokenId id) {
  if (id < 0 || id >= trie_->n_vocab())
    return false;
  if (is_end_of_generation(id))
    return matcher_.can_end();
  const std::string& text = trie_->pieces()[id];
  GrammarMatcher::State s = matcher_.state();
  for (char c : text)
    s = matcher_.step(s, static_cast<uint8_t>(c));
  return !text.empty() && s != GrammarMatcher::kDead;
}

std::span<const uint64_t> GrammarTokenFilter::allowed() {
  if (sets_epoch_ != matcher_.epoch()) { // the automaton started over: states renamed
    sets_.clear();
    sets_epoch_ = matcher_.epoch();
  }
  const GrammarMatcher::State at = matcher_.state();
  if (auto it = sets_.find(at); it != sets_.end())
    return it->second;
  if (sets_.size() >= kMaxCachedSets)
    sets_.clear();
  return sets_.emplace(at, compute_allowed()).first->second;
}

std::vector<uint64_t> GrammarTokenFilter::compute_allowed() {
  std::vector<uint64_t> bits((static_cast<size_t>(trie_->n_vocab()) + 63) / 64, 0);
  auto set = [&](TokenId id) { bits[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64); };
  const auto& nodes = trie_->nodes();
  const auto& tokens = trie_->tokens();
  // Depth first over the trie, each node with the automaton state its bytes lead to.
  std::vector<std::pair<int32_t, GrammarMatcher::State>> work{{0, matcher_.state()}};
  while (!work.empty()) {
    const auto [node, state] = work.back();
    work.pop_back();
    for (int32_t c = nodes[node].first_child; c >= 0; c = nodes[c].next_sibling) {
      const GrammarMatcher::State next = matcher_.step(state, nodes[c].byte);
      if (next == GrammarMatcher::kDead)
        continue;
      for (int32_t t = nodes[c].tokens_begin; t < nodes[c].tokens_end; ++t)
        set(tokens[t]);
      if (nodes[c].first_child >= 0)
        work.emplace_back(c, next);
    }
  }
  if (matcher_.can_end())
    for (TokenId id : trie_->end_of_generation())
      set(id);
  return bits;
}

Status GrammarTokenFilter::accept(TokenId id) {
  if (id < 0 || id >= trie_->n_vocab())
    return invalid_argument("token " + std::to_string(id) + " is outside the vocabulary");
  if (is_end_of_generation(id)) {
    if (!matcher_.can_end())
      return invalid_argument("end of generation before the grammar's text is complete");
    return Status::ok_status();
  }
  const std::string& text = trie_->pieces()[id];
  if (text.empty() || !matcher_.accept(text))
    return invalid_argument("token " + std::to_string(id) + " does not fit the grammar here");
  return Status::ok_status();
}

Status GrammarTokenFilter::accept_text(std::string_view text) {
  if (!matcher_.accept(text))
    return invalid_argument("the text \"" + std::string(text) + "\" does not fit the grammar here");
  return Status::ok_status();
}

} // namespace pshard
