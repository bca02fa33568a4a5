// What the Responses and Messages APIs' translations into a chat completion share: fields
// passed through, and their tool lists, each entry checked by its API's rule, as chat
// tools.
#pragma once

#include "tools/pshard-server/api_error.h"

#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <variant>

namespace pshard::server {

// `entry` turns tools[i] (named `param` in errors) into a chat function object
// ({name, description, parameters}) or the error to answer.
using ToolEntryReader = std::function<std::variant<nlohmann::ordered_json, ApiError>(
    const nlohmann::ordered_json& tool, const std::string& param)>;

// `body`'s "tools", if any, as the chat's "tools".
FieldError copy_tools(const nlohmann::ordered_json& body, const ToolEntryReader& entry,
                      nlohmann::ordered_json& chat);

// The fields of `from` named in `keys` that are present and not null, copied into `to`.
void copy_fields(const nlohmann::ordered_json& from, nlohmann::ordered_json& to,
                 std::span<const char* const> keys);
inline void copy_fields(const nlohmann::ordered_json& from, nlohmann::ordered_json& to,
                        std::initializer_list<const char*> keys) {
  copy_fields(from, to, std::span<const char* const>(keys.begin(), keys.size()));
}
// One such field under another name (max_output_tokens -> max_tokens).
void copy_field(const nlohmann::ordered_json& from, const char* key, nlohmann::ordered_json& to,
                const char* as);

} // namespace pshard::server
