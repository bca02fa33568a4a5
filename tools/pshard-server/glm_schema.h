// What GLM-4.5's calls write raw: an argument whose schema is a string (glm_tools.cpp),
// shared by reading answers back and by the calls' grammar (glm_tool_grammar.cpp).
#pragma once

#include <nlohmann/json.hpp>

namespace pshard::server {

// A property's schema with a local $ref ("#/$defs/NAME", "#/definitions/NAME") looked up
// once in the parameters' own definitions; the schema itself otherwise.
const nlohmann::ordered_json& resolve_local_ref(const nlohmann::ordered_json& prop,
                                                const nlohmann::ordered_json& params);

// Whether GLM writes a value of this schema raw: a string, or one of strings (enum, const).
bool is_string_schema(const nlohmann::ordered_json& schema);

} // namespace pshard::server
