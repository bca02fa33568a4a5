#include "runtime/grammar/triggered_filter.h"

namespace pshard {

Result<std::shared_ptr<TriggeredTokenFilter>>
TriggeredTokenFilter::create(std::shared_ptr<const Grammar> grammar,
                             std::shared_ptr<const TokenTrie> trie, std::string trigger) {
  if (!grammar || !trie)
    return invalid_argument("a triggered grammar needs a grammar and a vocabulary");
  if (trigger.empty())
    return invalid_argument("the grammar's trigger is empty; give the text that starts it");
  GrammarMatcher probe(grammar);
  if (!probe.accept(trigger))
    return invalid_argument("the grammar cannot start with its trigger \"" + trigger +
                            "\": its sentences must begin with the trigger text");
  std::shared_ptr<TriggeredTokenFilter> f(
      new TriggeredTokenFilter(std::move(grammar), std::move(trie), std::move(trigger)));
  return f;
}

TriggeredTokenFilter::TriggeredTokenFilter(std::shared_ptr<const Grammar> grammar,
                                           std::shared_ptr<const TokenTrie> trie,
                                           std::string trigger)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), trigger_(std::move(trigger)),
      everything_((static_cast<size_t>(trie_->n_vocab()) + 63) / 64, ~uint64_t{0}) {}

bool TriggeredTokenFilter::allows(TokenId id) {
  if (inner_)
    return inner_->allows(id);
  return id >= 0 && id < trie_->n_vocab();
}

std::span<const uint64_t> TriggeredTokenFilter::allowed() {
  return inner_ ? inner_->allowed() : std::span<const uint64_t>(everything_);
}

Status TriggeredTokenFilter::accept(TokenId id) {
  if (inner_)
    return inner_->accept(id);
  if (id < 0 || id >= trie_->n_vocab())
    return invalid_argument("token " + std::to_string(id) + " is outside the vocabulary");
  tail_ += trie_->pieces()[id];
  const size_t at = tail_.find(trigger_);
  if (at == std::string::npos) {
    // Keep only what could still be the start of a trigger.
    if (tail_.size() >= trigger_.size())
      tail_.erase(0, tail_.size() - (trigger_.size() - 1));
    return Status::ok_status();
  }
  PSHARD_ASSIGN_OR_RETURN(inner_, GrammarTokenFilter::create(grammar_, trie_));
  const Status st = inner_->accept_text(std::string_view(tail_).substr(at));
  tail_.clear();
  return st;
}

} // namespace pshard
