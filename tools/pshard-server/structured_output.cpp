#include "tools/pshard-server/structured_output.h"

namespace pshard::server {
namespace {

using nlohmann::json;

// Any JSON object: what OpenAI's json_object mode promises.
constexpr const char* kAnyObject = R"({"type": "object", "additionalProperties": true})";

FieldError read_response_format(const json& f, StructuredOutput& out) {
  const char* param = "response_format";
  if (!f.is_object() || !f.contains("type") || !f["type"].is_string())
    return bad_request("'response_format' must be an object with a string 'type': \"text\", "
                       "\"json_object\" or \"json_schema\"",
                       param, "invalid_type");
  const std::string type = f["type"].get<std::string>();
  if (type == "text")
    return std::nullopt;
  if (type == "json_object") {
    out.json_schema = kAnyObject;
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
  auto schema = spec->find("schema");
  if (schema == spec->end() || !(schema->is_object() || schema->is_boolean()))
    return bad_request("'response_format.json_schema.schema' must be a JSON Schema object",
                       "response_format.json_schema.schema", "invalid_type");
  out.json_schema = schema->dump();
  return std::nullopt;
}

} // namespace

FieldError read_structured_output(const json& body, StructuredOutput& out) {
  int given = 0;
  if (auto f = body.find("response_format"); f != body.end() && !f->is_null()) {
    if (FieldError e = read_response_format(*f, out))
      return e;
    given += !out.json_schema.empty();
  }
  if (auto s = body.find("json_schema"); s != body.end() && !s->is_null()) {
    if (!s->is_object() && !s->is_boolean())
      return bad_request("'json_schema' must be a JSON Schema object", "json_schema",
                         "invalid_type");
    out.json_schema = s->dump();
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
  return std::nullopt;
}

} // namespace pshard::server
