// Anthropic's Messages API (POST /v1/messages, what Claude Code and Anthropic's SDKs call)
// read as the chat completion it asks for: `system` -> a system message; `messages` with
// text, image (base64 source), tool_use and tool_result blocks -> turns (tool results as
// tool messages; earlier thinking blocks are not shown to the model again); `tools`
// ({name, description, input_schema}), `tool_choice` (auto / any / tool / none,
// disable_parallel_tool_use), `stop_sequences`, `max_tokens` (required, as Anthropic's),
// `thinking` {"type": "enabled"} (else a thinking model is asked not to think, as
// Anthropic's models answer without thinking unless it is enabled).
#pragma once

#include "tools/pshard-server/api_error.h"

#include <nlohmann/json.hpp>
#include <variant>

namespace pshard::server {

std::variant<nlohmann::ordered_json, ApiError> messages_as_chat(const nlohmann::ordered_json& body);

// Anthropic's error object: {"type": "error", "error": {"type", "message"}}.
nlohmann::json anthropic_error_json(const ApiError& e);

} // namespace pshard::server
