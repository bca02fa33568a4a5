// Structured output in a request body: OpenAI's `response_format` ({"type": "text"},
// {"type": "json_object"}, {"type": "json_schema", "json_schema": {"name", "schema",
// "strict"}}) and llama-server's `json_schema` (a schema object) and `grammar` (GBNF
// text). At most one of them; the batch compiles it (pshard_generate_params.grammar /
// json_schema) and a bad grammar or schema is refused there with a 400 naming what is
// wrong. The schema is always enforced, `strict` or not.
#pragma once

#include "tools/pshard-server/api_error.h"

#include <string>

namespace pshard::server {

struct StructuredOutput {
  std::string grammar;     // GBNF, or empty
  std::string json_schema; // JSON text, or empty
};

FieldError read_structured_output(const nlohmann::json& body, StructuredOutput& out);

} // namespace pshard::server
