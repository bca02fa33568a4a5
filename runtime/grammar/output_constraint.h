// What a caller constrains generated text with — a GBNF grammar or a JSON Schema —
// turned into a fresh token filter for one generation. One place for pshard-run, the C
// API (contexts and batches) and so pshard-server.
//
//   OutputConstraint c;
//   c.json_schema = R"({"type": "object", "properties": {"name": {"type": "string"}}})";
//   PSHARD_ASSIGN_OR_RETURN(auto filter, make_token_filter(c, trie));  // null if c is empty
//   sampler.set_filter(filter);
#pragma once

#include "runtime/grammar/token_grammar.h"
#include "runtime/grammar/triggered_filter.h"

#include <memory>
#include <string>

namespace pshard {

struct OutputConstraint {
  std::string grammar;     // GBNF text (grammar.h), start rule `root`
  std::string json_schema; // a JSON Schema as JSON text (json_schema_grammar.h)
  // Non-empty: the grammar applies only from this text on (triggered_filter.h); its
  // sentences must start with it.
  std::string trigger;
  // With a trigger: a text that opens with thought.open ignores the trigger until
  // thought.close (triggered_filter.h).
  Thought thought;
  bool empty() const { return grammar.empty() && json_schema.empty(); }
};

// The grammar `c` names: kInvalidArgument when it gives both, the parser's or the
// converter's error (naming the grammar or the schema) when one is bad.
Result<std::shared_ptr<const Grammar>> compile_output_constraint(const OutputConstraint& c);

// A filter at the start of the grammar; null when `c` is empty.
Result<std::shared_ptr<TokenFilter>> make_token_filter(const OutputConstraint& c,
                                                       std::shared_ptr<const TokenTrie> trie);

} // namespace pshard
