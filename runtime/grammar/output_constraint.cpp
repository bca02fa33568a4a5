#include "runtime/grammar/output_constraint.h"

#include "runtime/grammar/json_schema_grammar.h"
#include "runtime/grammar/triggered_filter.h"

namespace pshard {

Result<std::shared_ptr<const Grammar>> compile_output_constraint(const OutputConstraint& c) {
  if (!c.grammar.empty() && !c.json_schema.empty())
    return invalid_argument("give a grammar or a JSON schema, not both");
  std::string gbnf = c.grammar;
  if (!c.json_schema.empty()) {
    auto converted = json_schema_to_gbnf(c.json_schema);
    if (!converted.ok())
      return converted.status().with_context("in the JSON schema");
    gbnf = std::move(converted).value();
  }
  auto grammar = parse_gbnf(gbnf);
  if (!grammar.ok())
    return Status(StatusCode::kInvalidArgument, grammar.status().message())
        .with_context(c.json_schema.empty() ? "in the grammar"
                                            : "in the grammar made from the JSON schema");
  return std::make_shared<const Grammar>(std::move(grammar).value());
}

Result<std::shared_ptr<TokenFilter>> make_token_filter(const OutputConstraint& c,
                                                       std::shared_ptr<const TokenTrie> trie) {
  if (c.empty()) {
    if (!c.trigger.empty() || !c.thought.empty())
      return invalid_argument("a grammar trigger or thought without a grammar or JSON schema");
    return std::shared_ptr<TokenFilter>();
  }
  PSHARD_ASSIGN_OR_RETURN(auto grammar, compile_output_constraint(c));
  if (!c.trigger.empty()) {
    PSHARD_ASSIGN_OR_RETURN(auto triggered, TriggeredTokenFilter::create(grammar, std::move(trie),
                                                                         c.trigger, c.thought));
    return std::shared_ptr<TokenFilter>(std::move(triggered));
  }
  if (!c.thought.empty())
    return invalid_argument("a thought (its tags) is for a grammar with a trigger; give the "
                            "trigger too, or no thought");
  PSHARD_ASSIGN_OR_RETURN(auto filter, GrammarTokenFilter::create(grammar, std::move(trie)));
  return std::shared_ptr<TokenFilter>(std::move(filter));
}

} // namespace pshard
