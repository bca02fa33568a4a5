// GrammarMatcher: where generated text stands in a Grammar (grammar.h), byte by byte.
//
//   PSHARD_ASSIGN_OR_RETURN(Grammar g, parse_gbnf(R"(root ::= "yes" | "no")"));
//   GrammarMatcher m(std::make_shared<const Grammar>(std::move(g)));
//   m.accept("ye");      // true
//   m.can_end();         // false: "ye" is not a whole sentence
//   m.accept("s");       // true; now m.can_end() and !m.can_continue()
//
// The grammar is a pushdown automaton, walked as the set of every stack it could be
// in (an Earley-like frontier without left recursion, which parse_gbnf refuses). Each
// set seen is interned as a State, and transitions between States are cached, so
// walking the same text again (every vocabulary token at every step, token_grammar.h)
// costs a table look-up a byte: a deterministic automaton built lazily, only where
// generation goes. The caches are bounded; past kMaxStates they start over.
#pragma once

#include "runtime/grammar/grammar.h"

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pshard {

class GrammarMatcher {
public:
  using State = int32_t;
  static constexpr State kDead = -1; // no stack survives: the text left the grammar
  static constexpr int32_t kMaxStates = 1 << 16;
  // A frontier wider than this, or a stack deeper, is cut off (kDead): a guard against
  // grammars whose ambiguity explodes, not a limit a sensible grammar reaches.
  static constexpr size_t kMaxStacks = 4096;
  static constexpr size_t kMaxDepth = 4096;

  // Starts at the beginning of `root`.
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Advances over `bytes`; false, with the position unchanged, when the grammar cannot
  // match them here. Empty bytes are accepted.
  bool accept(std::string_view bytes);
  // Whether the bytes accepted so far are a whole sentence of the grammar.
  bool can_end() const { return can_end(current_); }
  // Whether some byte may follow.
  bool can_continue() const { return can_continue(current_); }
  // Back to the beginning of `root`.
  void reset();

  // The automaton, for walking many byte strings from one position (token_grammar.h).
  // States stay valid until the next step() or accept() that starts the caches over;
  // epoch() changes when that happens.
  State state() const { return current_; }
  State step(State from, uint8_t byte);
  bool can_end(State s) const;
  bool can_continue(State s) const;
  uint64_t epoch() const { return epoch_; }
  size_t n_states() const { return states_.size(); }

  const Grammar& grammar() const { return *grammar_; }

private:
  using Stack = std::vector<int32_t>;  // positions in Grammar::elements, top last
  using StackSet = std::vector<Stack>; // sorted, unique

  struct StateInfo {
    StackSet stacks;
    bool can_end = false;
    bool can_continue = false;
    std::vector<State> next; // 256 entries once a step has been taken; -2 = not yet
  };

  // Expands `stack` until its top is a byte set, adding every result (and an empty
  // stack where it completes root) to `out`; false if a guard was hit.
  bool expand(Stack stack, StackSet& out) const;
  State intern(StackSet stacks);
  State start_state();
  void start_over(); // drops every state but the current one

  std::shared_ptr<const Grammar> grammar_;
  std::vector<StateInfo> states_;
  std::unordered_map<std::string, State> index_; // a StackSet's bytes -> its State
  State current_ = kDead;
  uint64_t epoch_ = 0;
};

} // namespace pshard
