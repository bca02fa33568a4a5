#include "tools/pshard-server/api_error.h"

#include <cmath>

namespace pshard::server {
namespace {

using nlohmann::json;

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

const char* type_name(const json& v) {
  switch (v.type()) {
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "a number";
  }
}

ApiError wrong_type(const char* key, const char* want, const json& got) {
  return bad_request(std::string("'") + key + "' must be " + want + ", got " + type_name(got), key,
                     "invalid_type");
}

std::string number(double v) {
  json j = v;
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    j = static_cast<int64_t>(v);
  return j.dump();
}

// The field, or null when absent (OpenAI treats null as not given).
const json* field(const json& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

} // namespace

json error_json(const ApiError& e) {
  return {{"error",
           {{"message", e.message},
            {"type", e.type},
            {"param", or_null(e.param)},
            {"code", or_null(e.code)}}}};
}

ApiError bad_request(std::string message, std::string param, std::string code) {
  return {400, "invalid_request_error", std::move(message), std::move(param), std::move(code)};
}

ApiError not_found_error(std::string message, std::string param, std::string code) {
  return {404, "invalid_request_error", std::move(message), std::move(param), std::move(code)};
}

ApiError finish_error(pshard_finish_reason finish, pshard_status status, std::string message) {
  if (finish == PSHARD_FINISH_ERROR)
    return error_from_status(status, std::move(message));
  return ApiError{503, "unavailable_error",
                  "the request was cancelled (the server may be stopping)", "", "cancelled"};
}

ApiError error_from_status(pshard_status status, std::string message) {
  switch (status) {
  case PSHARD_ERROR_INVALID_ARGUMENT:
  case PSHARD_ERROR_OUT_OF_RANGE:
  case PSHARD_ERROR_UNSUPPORTED:
    return bad_request(std::move(message));
  case PSHARD_ERROR_NOT_FOUND:
    return not_found_error(std::move(message));
  case PSHARD_ERROR_UNAVAILABLE:
    return {503, "unavailable_error", std::move(message), "", "server_busy"};
  case PSHARD_ERROR_OUT_OF_MEMORY:
    return {503, "unavailable_error", std::move(message), "", "out_of_memory"};
  default:
    return {500, "server_error", std::move(message), "", ""};
  }
}

FieldError read_field(const json& body, const char* key, bool& out) {
  const json* v = field(body, key);
  if (!v)
    return std::nullopt;
  if (!v->is_boolean())
    return wrong_type(key, "a boolean", *v);
  out = v->get<bool>();
  return std::nullopt;
}

FieldError read_field(const json& body, const char* key, std::string& out) {
  const json* v = field(body, key);
  if (!v)
    return std::nullopt;
  if (!v->is_string())
    return wrong_type(key, "a string", *v);
  out = v->get<std::string>();
  return std::nullopt;
}

FieldError read_field(const json& body, const char* key, double& out, double lo, double hi) {
  const json* v = field(body, key);
  if (!v)
    return std::nullopt;
  if (!v->is_number())
    return wrong_type(key, "a number", *v);
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi))
    return bad_request(std::string("'") + key + "' must be between " + number(lo) + " and " +
                           number(hi) + ", got " + v->dump(),
                       key, "invalid_value");
  out = d;
  return std::nullopt;
}

FieldError read_field(const json& body, const char* key, int64_t& out, int64_t lo, int64_t hi) {
  const json* v = field(body, key);
  if (!v)
    return std::nullopt;
  if (!v->is_number_integer() &&
      !(v->is_number_float() && v->get<double>() == std::floor(v->get<double>())))
    return wrong_type(key, "an integer", *v);
  const double d = v->get<double>();
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
    return bad_request(std::string("'") + key + "' must be between " + std::to_string(lo) +
                           " and " + std::to_string(hi) + ", got " + v->dump(),
                       key, "invalid_value");
  out = v->is_number_integer() ? v->get<int64_t>() : static_cast<int64_t>(d);
  return std::nullopt;
}

FieldError read_strings(const json& body, const char* key, size_t max,
                        std::vector<std::string>& out) {
  const json* v = field(body, key);
  if (!v)
    return std::nullopt;
  if (v->is_string()) {
    out = {v->get<std::string>()};
    return std::nullopt;
  }
  if (!v->is_array())
    return wrong_type(key, "a string or an array of strings", *v);
  if (v->size() > max)
    return bad_request(std::string("'") + key + "' takes at most " + std::to_string(max) +
                           " strings, got " + std::to_string(v->size()),
                       key, "invalid_value");
  out.clear();
  for (const json& s : *v) {
    if (!s.is_string())
      return wrong_type(key, "a string or an array of strings", s);
    out.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

} // namespace pshard::server
