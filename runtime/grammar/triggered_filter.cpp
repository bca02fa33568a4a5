#include "runtime/grammar/triggered_filter.h"

namespace pshard {

Result<std::shared_ptr<TriggeredTokenFilter>>
TriggeredTokenFilter::create(std::shared_ptr<const Grammar> grammar,
                             std::shared_ptr<const TokenTrie> trie, std::string trigger,
                             Thought thought) {
  if (!grammar || !trie)
    return invalid_argument("a triggered grammar needs a grammar and a vocabulary");
  if (trigger.empty())
    return invalid_argument("the grammar's trigger is empty; give the text that starts it");
  GrammarMatcher probe(grammar);
  if (!probe.accept(trigger))
    return invalid_argument("the grammar cannot start with its trigger \"" + trigger +
                            "\": its sentences must begin with the trigger text");
  if (!thought.open.empty() && thought.close.empty())
    return invalid_argument("a thought needs its closing tag (its opening alone cannot end it); "
                            "give both, the closing alone for one the prompt opened, or neither");
  std::shared_ptr<TriggeredTokenFilter> f(new TriggeredTokenFilter(
      std::move(grammar), std::move(trie), std::move(trigger), std::move(thought)));
  return f;
}

TriggeredTokenFilter::TriggeredTokenFilter(std::shared_ptr<const Grammar> grammar,
                                           std::shared_ptr<const TokenTrie> trie,
                                           std::string trigger, Thought thought)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), trigger_(std::move(trigger)),
      thought_(std::move(thought)),
      state_(thought_.close.empty()  ? State::kWatching
             : thought_.open.empty() ? State::kThought // the prompt opened it
                                     : State::kOpening),
      everything_((static_cast<size_t>(trie_->n_vocab()) + 63) / 64, ~uint64_t{0}) {}

void TriggeredTokenFilter::trim_tail(const std::string& tag) {
  if (tail_.size() >= tag.size())
    tail_.erase(0, tail_.size() - (tag.size() - 1));
}

void TriggeredTokenFilter::advance(std::string_view text) {
  tail_ += text;
  if (state_ == State::kOpening) {
    const size_t first = tail_.find_first_not_of(" \t\n\r\f\v");
    if (first == std::string::npos) { // whitespace only: undecided
      trim_tail(trigger_);
      return;
    }
    const std::string_view rest = std::string_view(tail_).substr(first);
    const std::string& open = thought_.open;
    if (rest.size() < open.size() && open.starts_with(rest))
      return; // may still be the opening
    if (!rest.starts_with(open)) {
      state_ = State::kWatching; // an answer without a thought: watched whole
      return;
    }
    state_ = State::kThought;
    tail_.erase(0, first + open.size());
  }
  if (state_ == State::kThought) {
    const size_t at = tail_.find(thought_.close);
    if (at == std::string::npos) {
      trim_tail(thought_.close);
      return;
    }
    state_ = State::kWatching; // what followed the closing is the answer's
    tail_.erase(0, at + thought_.close.size());
  }
}

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
  advance(trie_->pieces()[id]);
  if (state_ != State::kWatching)
    return Status::ok_status();
  const size_t at = tail_.find(trigger_);
  if (at == std::string::npos) {
    trim_tail(trigger_); // only what could still be the start of a trigger
    return Status::ok_status();
  }
  PSHARD_ASSIGN_OR_RETURN(inner_, GrammarTokenFilter::create(grammar_, trie_));
  const Status st = inner_->accept_text(std::string_view(tail_).substr(at));
  tail_.clear();
  return st;
}

} // namespace pshard
