// What the Responses and Messages APIs' translations into a chat completion share: their
// tool lists, each entry checked by its API's rule, as chat tools.
#pragma once

#include "tools/pshard-server/api_error.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

namespace pshard::server {

// `entry` turns tools[i] (named `param` in errors) into a chat function object
// ({name, description, parameters}) or the error to answer.
using ToolEntryReader = std::function<std::variant<nlohmann::ordered_json, ApiError>(
    const nlohmann::ordered_json& tool, const std::string& param)>;

std::variant<nlohmann::ordered_json, ApiError> chat_tools(const nlohmann::ordered_json& tools,
                                                          const ToolEntryReader& entry);

} // namespace pshard::server
