// Structured output in a request body: OpenAI's `response_format` ({"type": "text"},
// {"type": "json_object"}, {"type": "json_schema", "json_schema": {"name", "schema",
// "strict"}}) and llama-server's `json_schema` (a schema object) and `grammar` (GBNF
// text). At most one of them. A schema is converted to its grammar here (the C API's
// pshard_json_schema_to_grammar) and every grammar checked, so a bad one is a 400 naming
// the field (`invalid_json_schema`, `unsupported_json_schema`, `invalid_grammar`) before
// the request queues. The schema is always enforced, `strict` or not.
#pragma once

#include "tools/pshard-server/api_error.h"

#include <string>

namespace pshard::server {

struct StructuredOutput {
  std::string grammar; // GBNF (given, or made from the schema), or empty: plain text
  std::string trigger; // "": the grammar constrains from the first token
};

// A schema's grammar through the C API, checked; a 400 naming `param`
// (invalid_json_schema, unsupported_json_schema) when it is bad.
FieldError schema_grammar(const std::string& schema, const std::string& param, std::string& out);

// `body`: the request read as ordered JSON, so a schema keeps its key order.
FieldError read_structured_output(const nlohmann::ordered_json& body, StructuredOutput& out);

} // namespace pshard::server
