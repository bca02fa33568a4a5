#include "tools/pshard-server/structured_output.h"

#include "pshard/pshard.h"

namespace pshard::server {
namespace {

using nlohmann::ordered_json;

// Any JSON object: what OpenAI's json_object mode promises.
constexpr const char* kAnyObject = R"({"type": "object", "additionalProperties": true})";

// The schema response_format names (empty for text) and the field it came from.
FieldError read_response_format(const ordered_json& f, std::string& schema, std::string& param) {
  if (!f.is_object() || !f.contains("type") || !f["type"].is_string())
    return bad_request("'response_format' must be an object with a string 'type': \"text\", "
                       "\"json_object\" or \"json_schema\"",
                       "response_format", "invalid_type");
  const std::string type = f["type"].get<std::string>();
  if (type == "text")
    return std::nullopt;
  if (type == "json_object") {
    schema = kAnyObject;
    param = "response_format";
    return std::nullopt;
  }
  if (type != "json_schema")
    return bad_request("'response_format.type' must be \"text\", \"json_object\" or "
                       "\"json_schema\", got \"" + type + "\"",
                       "response_format.type", "invalid_value");
  auto spec = f.find("json_schema");
  if (spec == f.end() || !spec->is_object())
    return bad_request("'response_format.json_schema' must be an object with the schema in "
                       "'schema' (and a 'name')",
                       "response_format.json_schema", "invalid_type");
  auto spec_schema = spec->find("schema");
  if (spec_schema == spec->end() || !(spec_schema->is_object() || spec_schema->is_boolean()))
    return bad_request("'response_format.json_schema.schema' must be a JSON Schema object",
                       "response_format.json_schema.schema", "invalid_type");
  schema = spec_schema->dump();
  param = "response_format.json_schema.schema";
  return std::nullopt;
}

} // namespace

FieldError schema_grammar(const std::string& schema, const std::string& param, std::string& out) {
  size_t length = 0;
  pshard_status st = pshard_json_schema_to_grammar(schema.c_str(), nullptr, 0, &length);
  if (st == PSHARD_ERROR_OUT_OF_RANGE) { // converted; now with room for it
    out.resize(length + 1);
    st = pshard_json_schema_to_grammar(schema.c_str(), out.data(), out.size(), &length);
    out.resize(length);
  }
  if (st != PSHARD_OK)
    return bad_request(std::string("'") + param + "': " + pshard_last_error(), param,
                       st == PSHARD_ERROR_UNSUPPORTED ? "unsupported_json_schema"
                                                      : "invalid_json_schema");
  if (pshard_grammar_validate(out.c_str()) != PSHARD_OK)
    return bad_request(std::string("'") + param + "' gives a grammar pshard cannot follow: " +
                           pshard_last_error(),
                       param, "invalid_json_schema");
  return std::nullopt;
}

FieldError read_structured_output(const ordered_json& body, StructuredOutput& out) {
  int given = 0;
  std::string schema, param;
  if (auto f = body.find("response_format"); f != body.end() && !f->is_null()) {
    if (FieldError e = read_response_format(*f, schema, param))
      return e;
    given += !schema.empty();
  }
  if (auto s = body.find("json_schema"); s != body.end() && !s->is_null()) {
    if (!s->is_object() && !s->is_boolean())
      return bad_request("'json_schema' must be a JSON Schema object", "json_schema",
                         "invalid_type");
    schema = s->dump();
    param = "json_schema";
    ++given;
  }
  if (auto g = body.find("grammar"); g != body.end() && !g->is_null()) {
    if (!g->is_string() || g->get<std::string>().empty())
      return bad_request("'grammar' must be GBNF text (a non-empty string)", "grammar",
                         "invalid_type");
    out.grammar = g->get<std::string>();
    ++given;
  }
  if (given > 1)
    return bad_request("give one of 'response_format' (json_object or json_schema), "
                       "'json_schema' and 'grammar'",
                       "response_format", "invalid_value");
  if (!schema.empty())
    return schema_grammar(schema, param, out.grammar);
  if (!out.grammar.empty() && pshard_grammar_validate(out.grammar.c_str()) != PSHARD_OK)
    return bad_request(std::string("'grammar': ") + pshard_last_error(), "grammar",
                       "invalid_grammar");
  return std::nullopt;
}

} // namespace pshard::server
