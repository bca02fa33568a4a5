// The walk behind json_schema_to_gbnf (json_schema_grammar.h). Private to
// runtime/grammar; a header only so that the converter can be defined in two files:
// json_schema_grammar.cpp (the walk, $ref, allOf / anyOf / oneOf, enum, types, strings,
// numbers) and json_schema_objects_arrays.cpp (objects and arrays).
//
// The schema is walked once, top-down. Each schema becomes a GBNF expression; the ones
// that are not a single term (objects, alternatives, bounded strings, ...) become rules
// named after where they sit, and each $ref target becomes a rule named after its last
// pointer segment, created before its body so recursion finds it. Shared pieces (string,
// number, ws, ...) are fixed rules emitted only when used.
#pragma once

#include "runtime/core/status.h"
#include "runtime/grammar/json_rule_set.h"
#include "runtime/grammar/json_schema_keywords.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace pshard::json_grammar {

class Converter {
public:
  explicit Converter(const Json& doc) : doc_(doc) {}

  // The GBNF text of the grammar for the whole document.
  Result<std::string> run();

private:
  Result<std::string> term(const Json& s, const std::string& ptr, const std::string& name,
                           int depth);
  Result<std::string> body(const Json& s, const std::string& ptr, const std::string& name,
                           int depth);

  // $ref
  Result<std::string> ref_body(const Json& s, const std::string& ptr, const std::string& name,
                               int depth);
  Result<const Json*> resolve(const std::string& ref, const std::string& ptr);
  Result<std::string> ref_rule(const std::string& ref, const std::string& ptr, int depth);

  // allOf and merging
  struct Merging {
    Json out = Json::object();
    // Per part with additionalProperties: its own property names and the value.
    std::vector<std::pair<std::set<std::string>, Json>> closed;
    int steps = 0;
  };
  Result<std::string> all_of_body(const Json& s, const std::string& ptr, const std::string& name,
                                  int depth);
  Result<Json> merge(std::initializer_list<const Json*> parts, const std::string& ptr);
  Result<bool> merge_part(const Json& s, Merging& m, const std::string& ptr);
  Result<bool> merge_into(Merging& m, const Json& s, const std::string& ptr);
  Result<bool> merge_types(Json& out, const Json& t, const std::string& ptr);

  // anyOf / oneOf, enum / const
  Result<std::string> any_of_body(const Json& s, const std::string& ptr, const std::string& name,
                                  int depth);
  Result<std::string> enum_body(const Json& s, const std::string& ptr);

  // types, strings, numbers
  Result<std::string> typed_body(const Json& s, const std::string& ptr, const std::string& name,
                                 int depth);
  Result<std::string> type_body(const std::string& t, const Json& s, const std::string& ptr,
                                const std::string& name, int depth);
  Result<std::string> string_body(const Json& s, const std::string& ptr);
  Result<std::string> format_body(const Json& format, const std::string& ptr);
  Result<std::string> pattern_body(const Json& pattern, const std::string& ptr);
  Result<std::string> number_body(const Json& s, const std::string& ptr, bool integer);

  // objects and arrays (json_schema_objects_arrays.cpp)
  Result<std::string> object_body(const Json& s, const std::string& ptr, const std::string& name,
                                  int depth);
  Result<std::string> extra_key(const Json* props, const std::string& ptr, const std::string& name);
  std::string members(const std::vector<std::string>& kvs, const std::vector<bool>& req,
                      const std::string& extra_kv, const std::string& name);
  Result<std::optional<std::string>> items_term(const Json& s, const std::string& ptr,
                                                const std::string& name, int depth);
  Result<std::string> array_body(const Json& s, const std::string& ptr, const std::string& name,
                                 int depth);

  const Json& doc_;
  RuleSet rules_;
  std::map<std::string, std::string> ref_rules_; // JSON pointer -> its rule
};

} // namespace pshard::json_grammar
