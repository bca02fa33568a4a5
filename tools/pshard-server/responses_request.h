// OpenAI's Responses API (POST /v1/responses) read as the chat completion it asks for, so
// that one path serves both: `instructions` -> a system message; `input` (a string, or
// items: messages with input_text / input_image parts, earlier function_call and
// function_call_output items, reasoning items, which are not sent back) -> messages;
// function `tools`, `tool_choice`, `text.format` -> response_format, `max_output_tokens`
// -> max_tokens, `reasoning.effort` "none" / "minimal" -> thinking off. pshard keeps no
// responses: `previous_response_id` and `background` are refused (send the whole
// conversation); `store` is answered false.
#pragma once

#include "tools/pshard-server/api_error.h"

#include <nlohmann/json.hpp>
#include <variant>

namespace pshard::server {

// Ordered JSON: a schema's properties keep their order (they are generated in it).
std::variant<nlohmann::ordered_json, ApiError>
responses_as_chat(const nlohmann::ordered_json& body);

// An error of the chat request named by the Responses API's fields (messages -> input,
// max_tokens -> max_output_tokens, response_format -> text.format).
ApiError as_responses_error(ApiError e);

} // namespace pshard::server
