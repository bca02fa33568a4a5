// Reading and checking a schema's keywords (json_schema_keywords.h).
#include "runtime/grammar/json_schema_keywords.h"

#include "runtime/grammar/gbnf_text.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace pshard::json_grammar {
namespace {

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// Keywords that constrain values and are not implemented: refused wherever they appear.
bool is_refused(std::string_view key) {
  static const std::set<std::string_view> k = {"multipleOf",
                                               "not",
                                               "if",
                                               "then",
                                               "else",
                                               "patternProperties",
                                               "propertyNames",
                                               "dependentRequired",
                                               "dependentSchemas",
                                               "dependencies",
                                               "minProperties",
                                               "maxProperties",
                                               "unevaluatedProperties",
                                               "unevaluatedItems",
                                               "contains",
                                               "minContains",
                                               "maxContains",
                                               "$dynamicRef",
                                               "$recursiveRef"};
  return k.count(key) > 0;
}

const std::set<std::string>& type_names() {
  static const std::set<std::string> t = {"string", "number", "integer", "boolean",
                                          "null",   "object", "array"};
  return t;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Messages

std::string at(const std::string& ptr, std::string_view key) {
  return ptr + "/" + pointer_token(key);
}
std::string where(const std::string& ptr) {
  return ptr.empty() ? "at the schema's root" : "at " + ptr;
}

Status bad_keyword(const std::string& ptr, std::string_view key, const std::string& what) {
  return invalid_argument("'" + std::string(key) + "' " + where(at(ptr, key)) + " " + what);
}
Status unsupported_keyword(const std::string& ptr, std::string_view key, const std::string& why) {
  return unsupported("the keyword '" + std::string(key) + "' " + where(at(ptr, key)) +
                     " is not supported" + (why.empty() ? "" : " (" + why + ")"));
}

// ---------------------------------------------------------------------------------------
// Keywords

const Json* member(const Json& s, const char* key) {
  if (!s.is_object())
    return nullptr;
  const auto it = s.find(key);
  return it == s.end() ? nullptr : &*it;
}

bool is_annotation(std::string_view key) {
  static const std::set<std::string_view> k = {
      "title",         "description", "default",        "examples",        "$schema",
      "$id",           "$anchor",     "$dynamicAnchor", "$vocabulary",     "$comment",
      "deprecated",    "readOnly",    "writeOnly",      "contentEncoding", "contentMediaType",
      "contentSchema", "$defs",       "definitions"};
  return k.count(key) > 0;
}

Status check_keywords(const Json& s, const std::string& ptr) {
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& key = it.key();
    if (key == "uniqueItems") {
      if (!it->is_boolean())
        return bad_keyword(ptr, key, "must be true or false");
      if (it->get<bool>())
        return unsupported_keyword(ptr, key, "a grammar cannot keep items distinct");
    } else if (is_refused(key)) {
      return unsupported_keyword(ptr, key);
    }
  }
  return Status::ok_status();
}

bool has_constraints_besides(const Json& s, std::initializer_list<std::string_view> also) {
  for (auto it = s.begin(); it != s.end(); ++it)
    if (!is_annotation(it.key()) && std::find(also.begin(), also.end(), it.key()) == also.end())
      return true;
  return false;
}

Result<std::vector<std::string>> read_types(const Json& type, const std::string& ptr) {
  std::vector<std::string> out;
  auto add = [&](const Json& t) -> Status {
    if (!t.is_string())
      return bad_keyword(ptr, "type", "must be a type name or an array of them");
    const std::string name = t.get<std::string>();
    if (!type_names().count(name))
      return bad_keyword(ptr, "type",
                         "names an unknown type '" + name +
                             "' (string, number, integer, boolean, null, object, array)");
    if (std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
    return Status::ok_status();
  };
  if (type.is_array()) {
    for (const Json& t : type)
      PSHARD_RETURN_IF_ERROR(add(t));
    if (out.empty())
      return bad_keyword(ptr, "type", "is an empty array: no value has no type");
  } else {
    PSHARD_RETURN_IF_ERROR(add(type));
  }
  return out;
}

Result<std::optional<int64_t>> read_count(const Json& s, const char* key, const std::string& ptr) {
  const Json* v = member(s, key);
  if (!v)
    return std::optional<int64_t>();
  if (v->is_number_unsigned())
    return std::optional<int64_t>(
        static_cast<int64_t>(std::min<uint64_t>(v->get<uint64_t>(), INT64_MAX)));
  if (v->is_number_integer() && v->get<int64_t>() >= 0)
    return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (d >= 0 && std::floor(d) == d)
      return std::optional<int64_t>(d >= 9e18 ? INT64_MAX : static_cast<int64_t>(d));
  }
  return bad_keyword(ptr, key, "must be a non-negative whole number");
}

Status check_count(int64_t n, const std::string& ptr, const char* key) {
  if (n > kMaxCount)
    return unsupported_keyword(ptr, key, "counts above " + std::to_string(kMaxCount));
  return Status::ok_status();
}

} // namespace pshard::json_grammar
