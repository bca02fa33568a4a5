// The calls whose arguments are XML-tagged key/value pairs (CallsForm::kXmlArgs: GLM-4.5's
// <arg_key>/<arg_value>, Qwen3-Coder's and Qwen3.5's <function=NAME><parameter=KEY>), written,
// read back whole and read as they stream, from the format's markup (XmlArgsMarkup). A string
// argument is written raw, any other value as its format spells it; reading back needs the
// offered functions' string arguments (StringArgs) to tell the two apart.
#pragma once

#include "tools/pshard-server/tool_format.h"

#include <nlohmann/json.hpp>

namespace pshard::server {

// A property's schema with a local $ref ("#/$defs/NAME", "#/definitions/NAME") looked up
// once in the parameters' own definitions; the schema itself otherwise.
const nlohmann::ordered_json& resolve_local_ref(const nlohmann::ordered_json& prop,
                                                const nlohmann::ordered_json& params);

// Whether a value of this schema is written raw: a string, or one of strings (enum, const).
bool is_string_schema(const nlohmann::ordered_json& schema);

// The calls as `format` (its `xml` markup) writes them, one after another on their lines.
std::string xml_args_calls_text(const ToolFormat& format, const JsonList& calls);

// An answer's calls read back (tool_calls.h: parse_tool_answer).
ToolAnswer xml_args_parse(const std::string& text, const std::string& id_prefix,
                          const ToolFormat& format, const StringArgs* string_args);

// The calls so far (tool_calls.h: partial_calls): each whose name is whole, its arguments as
// far as whole pairs go.
std::vector<PartialCall> xml_args_partial(const std::string& text, const std::string& id_prefix,
                                          const ToolFormat& format, const StringArgs* string_args);

} // namespace pshard::server
