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
#pragma once

#include "runtime/grammar/token_grammar.h"

#include <memory>
#include <string>

namespace pshard {

class TriggeredTokenFilter final : public TokenFilter {
public:
  // kInvalidArgument for an empty trigger, or a grammar that cannot start with it.
  static Result<std::shared_ptr<TriggeredTokenFilter>>
  create(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
         std::string trigger);

  bool allows(TokenId id) override;
  std::span<const uint64_t> allowed() override;
  Status accept(TokenId id) override;

  bool triggered() const { return inner_ != nullptr; }

private:
  TriggeredTokenFilter(std::shared_ptr<const Grammar> grammar,
                       std::shared_ptr<const TokenTrie> trie, std::string trigger);

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::string trigger_;
  std::string tail_; // the last bytes of the text, enough to see a trigger begin
  std::shared_ptr<GrammarTokenFilter> inner_; // once triggered
  std::vector<uint64_t> everything_;          // the set before the trigger
};

} // namespace pshard
