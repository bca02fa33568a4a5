// pshard.h: structured output — the generation params' grammar or JSON schema as a
// token filter, and the schema-to-grammar conversion for apps.
#include "runtime/capi/capi_internal.h"
#include "runtime/grammar/json_schema_grammar.h"
#include "runtime/grammar/output_constraint.h"

using namespace pshard;
using pshard::capi::fail;

namespace pshard::capi {

Result<std::shared_ptr<TokenFilter>> token_filter(const pshard_model& model,
                                                  const pshard_generate_params& p) {
  OutputConstraint c;
  if (p.grammar)
    c.grammar = p.grammar;
  if (p.json_schema)
    c.json_schema = p.json_schema;
  if (p.grammar_trigger)
    c.trigger = p.grammar_trigger;
  if (p.thought_open)
    c.thought.open = p.thought_open;
  if (p.thought_close)
    c.thought.close = p.thought_close;
  if (c.empty() && c.trigger.empty() && c.thought.empty()) {
    if (p.grammar || p.json_schema)
      return invalid_argument("the generation params' grammar or json_schema is empty; give "
                              "text or NULL");
    return std::shared_ptr<TokenFilter>();
  }
  std::call_once(model.token_trie_once,
                 [&] { model.token_trie = TokenTrie::build(*model.tokenizer); });
  return make_token_filter(c, model.token_trie);
}

} // namespace pshard::capi

extern "C" {

pshard_status pshard_json_schema_to_grammar(const char* json_schema, char* grammar,
                                            size_t capacity, size_t* length) {
  if (!json_schema)
    return capi::null_argument("pshard_json_schema_to_grammar", "json_schema");
  if (!length)
    return capi::null_argument("pshard_json_schema_to_grammar", "length");
  if (!grammar && capacity > 0)
    return capi::null_argument("pshard_json_schema_to_grammar", "grammar");
  auto gbnf = json_schema_to_gbnf(json_schema);
  if (!gbnf.ok())
    return fail(gbnf.status());
  *length = gbnf->size();
  if (gbnf->size() + 1 > capacity)
    return fail(out_of_range("pshard_json_schema_to_grammar: the grammar needs " +
                             std::to_string(gbnf->size() + 1) + " bytes, the buffer has " +
                             std::to_string(capacity)));
  std::memcpy(grammar, gbnf->c_str(), gbnf->size() + 1);
  return capi::ok();
}

pshard_status pshard_grammar_validate(const char* grammar) {
  if (!grammar)
    return capi::null_argument("pshard_grammar_validate", "grammar");
  auto parsed = parse_gbnf(grammar);
  if (!parsed.ok())
    return fail(Status(StatusCode::kInvalidArgument, parsed.status().message()));
  return capi::ok();
}

} // extern "C"
