// OpenAI's error object, for every failure pshard-server answers:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "max_tokens",
//              "code": "context_length_exceeded"}}
// with the HTTP status that goes with it.
#pragma once

#include "pshard/pshard.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace pshard::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param; // "" -> null
  std::string code;  // "" -> null
};

nlohmann::json error_json(const ApiError& e);

ApiError bad_request(std::string message, std::string param = "", std::string code = "");
ApiError not_found_error(std::string message, std::string param = "", std::string code = "");
// A C API failure (pshard_last_error() as the message): 400 for the caller's mistakes,
// 503 when busy (a full queue) or out of memory, 500 otherwise.
ApiError error_from_status(pshard_status status, std::string message);
// What a sequence that ended badly answers: its error (PSHARD_FINISH_ERROR) or a 503
// "cancelled" (the server stopping, or the request cancelled).
ApiError finish_error(pshard_finish_reason finish, pshard_status status, std::string message);

// A JSON body's field readers: each fails with a 400 naming the field and the type it
// needs. Absent (or null) fields leave `out` untouched.
using FieldError = std::optional<ApiError>;
// Returns the error, from a function answering an ApiError (or a FieldError), if `expr` has one.
#define PSHARD_RETURN_IF_FIELD_ERROR(expr)                                                         \
  do {                                                                                             \
    if (::pshard::server::FieldError e_ = (expr))                                                  \
      return *e_;                                                                                  \
  } while (0)
FieldError read_field(const nlohmann::json& body, const char* key, bool& out);
FieldError read_field(const nlohmann::json& body, const char* key, std::string& out);
FieldError read_field(const nlohmann::json& body, const char* key, double& out, double lo,
                      double hi);
FieldError read_field(const nlohmann::json& body, const char* key, int64_t& out, int64_t lo,
                      int64_t hi);
// A string or an array of at most `max` strings (OpenAI's `stop`).
FieldError read_strings(const nlohmann::json& body, const char* key, size_t max,
                        std::vector<std::string>& out);

} // namespace pshard::server
