// A grammar that applies only from a trigger on: text is free until the generated text
// contains the trigger (say "<tool_call>"), and from the trigger's first byte on it must
// follow the grammar — whose sentences start with the trigger — to its end. This is how
// a model may answer in prose or call a tool: the call, once begun, is well-formed.
//
//   auto filter = TriggeredTokenFilter::create(grammar, trie, "<tool_call>");
//   sampler.set_filter(*filter);
//
// Before the trigger every token is allowed (end-of-generation too). The text is watched
// across token boundaries, so a trigger split over several tokens is seen when its last
// byte arrives; whatever followed it in the same token is fed to the grammar too.
//
// A thinking model's thought is not its answer: given a Thought ("<think>", "</think>"),
// a text that opens with its opening (after whitespace) ignores the trigger until the
// closing has come, so a call the model drafts while it thinks is left free, and only
// the answer's call is constrained. A text that opens otherwise is watched from its
// first byte, as without one. A Thought with a closing but no opening is one the prompt
// opened (templates that end their generation prompt with "<think>\n"): the text starts
// inside it. (The server parses calls out of the answer on the same rule: reasoning.h.)
#pragma once

#include "runtime/grammar/token_grammar.h"

#include <memory>
#include <string>

namespace pshard {

struct Thought {
  std::string open, close; // both empty: none; `open` alone empty: opened by the prompt
  bool empty() const { return open.empty() && close.empty(); }
};

class TriggeredTokenFilter final : public TokenFilter {
public:
  // kInvalidArgument for an empty trigger, a grammar that cannot start with it, or a
  // thought with an opening but no closing.
  static Result<std::shared_ptr<TriggeredTokenFilter>>
  create(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
         std::string trigger, Thought thought = {});

  bool allows(TokenId id) override;
  std::span<const uint64_t> allowed() override;
  Status accept(TokenId id) override;

  bool triggered() const { return inner_ != nullptr; }
  bool in_thought() const { return state_ == State::kThought; }

private:
  // kOpening: the text so far is whitespace and a beginning of the thought's opening.
  enum class State { kOpening, kThought, kWatching };
  TriggeredTokenFilter(std::shared_ptr<const Grammar> grammar,
                       std::shared_ptr<const TokenTrie> trie, std::string trigger, Thought thought);
  // Appends `text` to tail_ and moves on from the opening or the thought where it can.
  void advance(std::string_view text);
  // Keeps only the last bytes of tail_ that could begin `tag`.
  void trim_tail(const std::string& tag);

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::string trigger_;
  Thought thought_;
  State state_;
  std::string tail_; // the last bytes of the text, enough to see a trigger (or tag) begin
  std::shared_ptr<GrammarTokenFilter> inner_; // once triggered
  std::vector<uint64_t> everything_;          // the set before the trigger
};

} // namespace pshard
