// json_schema_to_gbnf (json_schema_grammar.h): the entry point, and the converter's
// walk (json_schema_converter.h) but for objects and arrays, which are in
// json_schema_objects_arrays.cpp.
#include "runtime/grammar/json_schema_grammar.h"

#include "runtime/grammar/gbnf_text.h"
#include "runtime/grammar/json_number_ranges.h"
#include "runtime/grammar/json_regex.h"
#include "runtime/grammar/json_schema_converter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace pshard::json_grammar {
namespace {

constexpr int kMaxMergeSteps = 1000; // $ref / allOf expansions while merging one allOf

// The JSON pointer a local $ref names, percent-decoded.
Result<std::string> ref_pointer(const std::string& ref, const std::string& ptr) {
  if (ref.empty() || ref[0] != '#')
    return unsupported("the $ref '" + ref + "' " + where(ptr) +
                       " is not local; only references into this schema (#...) are supported");
  std::string p;
  for (size_t i = 1; i < ref.size(); ++i) {
    auto hex = [&](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    if (ref[i] == '%' && i + 2 < ref.size() && hex(ref[i + 1]) >= 0 && hex(ref[i + 2]) >= 0) {
      p += static_cast<char>(hex(ref[i + 1]) * 16 + hex(ref[i + 2]));
      i += 2;
    } else {
      p += ref[i];
    }
  }
  if (!p.empty() && p[0] != '/')
    return unsupported("the $ref '" + ref + "' " + where(ptr) +
                       " names an anchor; only JSON pointers (#/$defs/NAME) are supported");
  return p;
}

// Whether `v` is of the JSON Schema type `type` (1.0 is an integer), for enum / const.
bool value_has_type(const Json& v, const std::string& type) {
  if (type == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (type == "number")
    return v.is_number();
  if (type == "string")
    return v.is_string();
  if (type == "boolean")
    return v.is_boolean();
  if (type == "null")
    return v.is_null();
  if (type == "object")
    return v.is_object();
  return v.is_array();
}

// Without `type`: the types whose keywords the schema uses; none means any value.
std::vector<std::string> inferred_types(const Json& s) {
  std::vector<std::string> types;
  auto any = [&](std::initializer_list<const char*> keys) {
    return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return member(s, k); });
  };
  if (any({"properties", "required", "additionalProperties"}))
    types.push_back("object");
  if (any({"items", "prefixItems", "additionalItems", "minItems", "maxItems"}))
    types.push_back("array");
  if (any({"minLength", "maxLength", "pattern", "format"}))
    types.push_back("string");
  if (any({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}))
    types.push_back("number");
  return types;
}

} // namespace

Result<std::string> Converter::run() {
  ref_rules_[""] = "root"; // "$ref": "#"
  PSHARD_ASSIGN_OR_RETURN(std::string root, body(doc_, "", "root", 0));
  rules_.define("root", root);
  return rules_.text();
}

// A schema's GBNF as one term: itself when it is one, else a rule named `name`.
Result<std::string> Converter::term(const Json& s, const std::string& ptr, const std::string& name,
                                    int depth) {
  PSHARD_ASSIGN_OR_RETURN(std::string b, body(s, ptr, name, depth));
  return is_term(b) ? b : rules_.add(name, b);
}

// A schema's GBNF expression; `name` names the rules made for its parts.
Result<std::string> Converter::body(const Json& s, const std::string& ptr, const std::string& name,
                                    int depth) {
  if (depth > kMaxNesting)
    return unsupported("the schema is nested deeper than " + std::to_string(kMaxNesting) +
                       " levels " + where(ptr));
  if (s.is_boolean()) {
    if (s.get<bool>())
      return rules_.use("value");
    return invalid_argument("the schema " + where(ptr) + " is false: no value satisfies it");
  }
  if (!s.is_object())
    return invalid_argument("the schema " + where(ptr) + " must be an object or a boolean, not " +
                            s.type_name());
  PSHARD_RETURN_IF_ERROR(check_keywords(s, ptr));
  if (member(s, "$ref"))
    return ref_body(s, ptr, name, depth);
  if (member(s, "allOf"))
    return all_of_body(s, ptr, name, depth);
  if (member(s, "anyOf") || member(s, "oneOf"))
    return any_of_body(s, ptr, name, depth);
  if (member(s, "enum") || member(s, "const"))
    return enum_body(s, ptr);
  return typed_body(s, ptr, name, depth);
}

// --- $ref ---

Result<std::string> Converter::ref_body(const Json& s, const std::string& ptr,
                                        const std::string& name, int depth) {
  const Json& ref = *member(s, "$ref");
  if (!ref.is_string())
    return bad_keyword(ptr, "$ref", "must be a string");
  if (has_constraints_besides(s, {"$ref"})) { // $ref next to constraints: both hold
    PSHARD_ASSIGN_OR_RETURN(Json merged, merge({&s}, ptr));
    return body(merged, ptr, name, depth + 1);
  }
  return ref_rule(ref.get<std::string>(), at(ptr, "$ref"), depth);
}

Result<const Json*> Converter::resolve(const std::string& ref, const std::string& ptr) {
  PSHARD_ASSIGN_OR_RETURN(std::string p, ref_pointer(ref, ptr));
  const Json* node = &doc_;
  size_t i = 0;
  while (i < p.size()) {
    const size_t next = std::min(p.find('/', i + 1), p.size());
    std::string token;
    for (size_t k = i + 1; k < next; ++k) {
      if (p[k] == '~' && k + 1 < next && (p[k + 1] == '0' || p[k + 1] == '1')) {
        token += p[k + 1] == '0' ? '~' : '/';
        ++k;
      } else {
        token += p[k];
      }
    }
    i = next;
    const Json* found = nullptr;
    if (node->is_object()) {
      found = member(*node, token.c_str());
    } else if (node->is_array() && !token.empty() &&
               token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10 &&
               std::stoul(token) < node->size()) {
      found = &(*node)[std::stoul(token)];
    }
    if (!found)
      return invalid_argument("the $ref '" + ref + "' " + where(ptr) +
                              " leads nowhere: the schema has no '" + token + "' there");
    node = found;
  }
  return node;
}

// The rule for a $ref's target, made the first time it is named.
Result<std::string> Converter::ref_rule(const std::string& ref, const std::string& ptr, int depth) {
  PSHARD_ASSIGN_OR_RETURN(std::string pointer, ref_pointer(ref, ptr));
  if (const auto it = ref_rules_.find(pointer); it != ref_rules_.end())
    return it->second;
  PSHARD_ASSIGN_OR_RETURN(const Json* target, resolve(ref, ptr));
  std::string base = sanitize(pointer.substr(pointer.rfind('/') + 1));
  if (base.empty() || !((base[0] >= 'a' && base[0] <= 'z') || (base[0] >= 'A' && base[0] <= 'Z')))
    base = "ref" + (base.empty() ? "" : "-" + base);
  const std::string name = rules_.reserve(base);
  ref_rules_[pointer] = name;
  PSHARD_ASSIGN_OR_RETURN(std::string b, body(*target, pointer, name, depth + 1));
  rules_.define(name, b);
  return name;
}

// --- allOf and merging ---

Result<std::string> Converter::all_of_body(const Json& s, const std::string& ptr,
                                           const std::string& name, int depth) {
  PSHARD_ASSIGN_OR_RETURN(Json merged, merge({&s}, ptr));
  if (merged.is_boolean() && !merged.get<bool>())
    return invalid_argument("the allOf " + where(at(ptr, "allOf")) +
                            " asks for types no value has at once");
  return body(merged, ptr, name, depth + 1);
}

// One schema that holds exactly where all of `parts` hold (false where none can),
// with $ref and allOf at their tops expanded in order. Keywords combine as JSON Schema
// combines them: each constrains alone, so their union is the conjunction; only types,
// properties and required need joining, and a keyword two parts give differently is
// refused.
Result<Json> Converter::merge(std::initializer_list<const Json*> parts, const std::string& ptr) {
  Merging m;
  for (const Json* part : parts) {
    PSHARD_ASSIGN_OR_RETURN(bool satisfiable, merge_part(*part, m, ptr));
    if (!satisfiable)
      return Json(false);
  }
  // additionalProperties holds against its own schema's properties: a part that closes
  // the object cannot be joined with one that lists more.
  if (const Json* props = member(m.out, "properties"))
    for (const auto& [own, extra] : m.closed)
      for (auto it = props->begin(); it != props->end(); ++it)
        if (!own.count(it.key()))
          return unsupported("the allOf " + where(ptr) +
                             " joins a schema with additionalProperties to one that lists "
                             "the other property '" +
                             it.key() + "'");
  return std::move(m.out);
}

Result<bool> Converter::merge_part(const Json& s, Merging& m, const std::string& ptr) {
  if (++m.steps > kMaxMergeSteps)
    return unsupported("the allOf / $ref " + where(ptr) +
                       " expands without end (a recursive $ref inside allOf?)");
  if (s.is_boolean())
    return s.get<bool>();
  if (!s.is_object())
    return invalid_argument("a schema inside the allOf " + where(ptr) +
                            " is not an object or a boolean");
  PSHARD_RETURN_IF_ERROR(check_keywords(s, ptr));
  if (const Json* ref = member(s, "$ref")) {
    if (!ref->is_string())
      return bad_keyword(ptr, "$ref", "must be a string");
    PSHARD_ASSIGN_OR_RETURN(const Json* target, resolve(ref->get<std::string>(), ptr));
    PSHARD_ASSIGN_OR_RETURN(bool satisfiable, merge_part(*target, m, ptr));
    if (!satisfiable)
      return false;
  }
  if (const Json* all = member(s, "allOf")) {
    if (!all->is_array() || all->empty())
      return bad_keyword(ptr, "allOf", "must be a non-empty array of schemas");
    for (const Json& part : *all) {
      PSHARD_ASSIGN_OR_RETURN(bool satisfiable, merge_part(part, m, ptr));
      if (!satisfiable)
        return false;
    }
  }
  return merge_into(m, s, ptr);
}

// The keywords of `s` itself into m.out.
Result<bool> Converter::merge_into(Merging& m, const Json& s, const std::string& ptr) {
  Json& out = m.out;
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    if (is_annotation(key) || key == "$ref" || key == "allOf")
      continue;
    if (key == "type") {
      PSHARD_ASSIGN_OR_RETURN(bool any, merge_types(out, v, ptr));
      if (!any)
        return false;
    } else if (key == "properties") {
      if (!v.is_object())
        return bad_keyword(ptr, key, "must be an object");
      Json& props = out["properties"];
      if (props.is_null())
        props = Json::object();
      for (auto p = v.begin(); p != v.end(); ++p) {
        Json* old = props.contains(p.key()) ? &props[p.key()] : nullptr;
        if (!old)
          props[p.key()] = p.value();
        else if (*old != p.value())
          *old = Json{{"allOf", Json::array({*old, p.value()})}};
      }
    } else if (key == "required") {
      if (!v.is_array())
        return bad_keyword(ptr, key, "must be an array of property names");
      Json& req = out["required"];
      if (req.is_null())
        req = Json::array();
      for (const Json& r : v)
        if (std::find(req.begin(), req.end(), r) == req.end())
          req.push_back(r);
    } else if (out.contains(key) && out[key] != v) {
      return unsupported("the allOf " + where(ptr) + " joins schemas that give '" + key +
                         "' differently");
    } else {
      if (key == "additionalProperties" && v != Json(true) && v != Json::object()) {
        std::set<std::string> own;
        if (const Json* props = member(s, "properties"); props && props->is_object())
          for (auto p = props->begin(); p != props->end(); ++p)
            own.insert(p.key());
        m.closed.emplace_back(std::move(own), v);
      }
      out[key] = v;
    }
  }
  return true;
}

// out.type := out.type ∩ t; false when nothing is left.
Result<bool> Converter::merge_types(Json& out, const Json& t, const std::string& ptr) {
  PSHARD_ASSIGN_OR_RETURN(std::vector<std::string> add, read_types(t, ptr));
  if (!out.contains("type")) {
    out["type"] = t;
    return true;
  }
  PSHARD_ASSIGN_OR_RETURN(std::vector<std::string> have, read_types(out["type"], ptr));
  auto has = [](const std::vector<std::string>& v, const char* n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  Json both = Json::array();
  for (const std::string& h : have) {
    if (has(add, h.c_str()))
      both.push_back(h);
    else if ((h == "integer" && has(add, "number")) || (h == "number" && has(add, "integer")))
      both.push_back("integer");
  }
  out["type"] = both;
  return !both.empty();
}

// --- anyOf / oneOf ---

Result<std::string> Converter::any_of_body(const Json& s, const std::string& ptr,
                                           const std::string& name, int depth) {
  if (member(s, "anyOf") && member(s, "oneOf"))
    return unsupported("anyOf together with oneOf " + where(ptr) + " is not supported");
  const char* key = member(s, "anyOf") ? "anyOf" : "oneOf";
  const Json& branches = *member(s, key);
  if (!branches.is_array() || branches.empty())
    return bad_keyword(ptr, key, "must be a non-empty array of schemas");
  // Sibling constraints hold in every branch: A and (B or C) = (A and B) or (A and C).
  Json siblings = s;
  siblings.erase(key);
  const bool distribute = has_constraints_besides(siblings, {});
  std::vector<std::string> alts;
  for (size_t i = 0; i < branches.size(); ++i) {
    const std::string bptr = at(at(ptr, key), std::to_string(i));
    const std::string bname = child_name(name, std::to_string(i));
    std::string alt;
    if (distribute) {
      PSHARD_ASSIGN_OR_RETURN(Json merged, merge({&siblings, &branches[i]}, bptr));
      if (merged.is_boolean() && !merged.get<bool>())
        continue; // this branch contradicts the siblings
      PSHARD_ASSIGN_OR_RETURN(alt, body(merged, bptr, bname, depth + 1));
    } else {
      PSHARD_ASSIGN_OR_RETURN(alt, body(branches[i], bptr, bname, depth + 1));
    }
    if (std::find(alts.begin(), alts.end(), alt) == alts.end())
      alts.push_back(alt);
  }
  if (alts.empty())
    return invalid_argument("no branch of the " + std::string(key) + " " + where(ptr) +
                            " agrees with the keywords next to it");
  return join(alts, " | ");
}

// --- enum / const ---

Result<std::string> Converter::enum_body(const Json& s, const std::string& ptr) {
  for (auto it = s.begin(); it != s.end(); ++it)
    if (!is_annotation(it.key()) && it.key() != "enum" && it.key() != "const" && it.key() != "type")
      return unsupported("the keyword '" + it.key() + "' " + where(at(ptr, it.key())) +
                         " next to enum / const is not supported");
  std::vector<Json> values;
  const Json* en = member(s, "enum");
  const Json* co = member(s, "const");
  if (en && !en->is_array())
    return bad_keyword(ptr, "enum", "must be an array");
  if (en)
    values.assign(en->begin(), en->end());
  if (co)
    values = en && std::find(en->begin(), en->end(), *co) == en->end() ? std::vector<Json>{}
                                                                       : std::vector<Json>{*co};
  if (const Json* type = member(s, "type")) {
    PSHARD_ASSIGN_OR_RETURN(std::vector<std::string> types, read_types(*type, ptr));
    std::erase_if(values, [&](const Json& v) {
      return std::none_of(types.begin(), types.end(),
                          [&](const std::string& t) { return value_has_type(v, t); });
    });
  }
  if (values.empty())
    return invalid_argument("no value satisfies the enum / const " + where(ptr));
  std::vector<std::string> alts;
  for (const Json& v : values) {
    const std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (v.is_number_float() && !std::isfinite(v.get<double>()))
      return unsupported("the enum / const " + where(ptr) +
                         " holds a number too large for a double");
    const std::string lit = literal(text);
    if (std::find(alts.begin(), alts.end(), lit) == alts.end())
      alts.push_back(lit);
  }
  return join(alts, " | ");
}

// --- types ---

Result<std::string> Converter::typed_body(const Json& s, const std::string& ptr,
                                          const std::string& name, int depth) {
  std::vector<std::string> types;
  if (const Json* type = member(s, "type")) {
    PSHARD_ASSIGN_OR_RETURN(types, read_types(*type, ptr));
  } else {
    types = inferred_types(s);
  }
  if (types.empty())
    return rules_.use("value");
  const bool number = std::find(types.begin(), types.end(), "number") != types.end();
  std::vector<std::string> alts;
  for (const std::string& t : types) {
    if (t == "integer" && number)
      continue; // number has them
    PSHARD_ASSIGN_OR_RETURN(std::string b, type_body(t, s, ptr, name, depth));
    alts.push_back(b);
  }
  return join(alts, " | ");
}

Result<std::string> Converter::type_body(const std::string& t, const Json& s,
                                         const std::string& ptr, const std::string& name,
                                         int depth) {
  if (t == "string")
    return string_body(s, ptr);
  if (t == "number" || t == "integer")
    return number_body(s, ptr, t == "integer");
  if (t == "object")
    return object_body(s, ptr, name, depth);
  if (t == "array")
    return array_body(s, ptr, name, depth);
  return rules_.use(t == "null" ? "null" : "boolean");
}

// --- strings ---

Result<std::string> Converter::string_body(const Json& s, const std::string& ptr) {
  const Json* pattern = member(s, "pattern");
  const Json* format = member(s, "format");
  PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> min, read_count(s, "minLength", ptr));
  PSHARD_ASSIGN_OR_RETURN(std::optional<int64_t> max, read_count(s, "maxLength", ptr));
  const int kinds = (pattern != nullptr) + (format != nullptr) + (min || max);
  if (kinds > 1)
    return unsupported("the string schema " + where(ptr) +
                       " combines pattern, format and minLength / maxLength; at most one of "
                       "them is supported");
  if (pattern)
    return pattern_body(*pattern, at(ptr, "pattern"));
  if (format)
    return format_body(*format, ptr);
  if (!min && !max)
    return rules_.use("string");
  const int64_t lo = min.value_or(0);
  if (max && *max < lo)
    return invalid_argument("no string satisfies minLength " + std::to_string(lo) +
                            " > maxLength " + std::to_string(*max) + " " + where(ptr));
  PSHARD_RETURN_IF_ERROR(check_count(lo, ptr, "minLength"));
  if (max)
    PSHARD_RETURN_IF_ERROR(check_count(*max, ptr, "maxLength"));
  const std::string q = literal("\"");
  if (max && *max == 0)
    return literal("\"\"");
  return seq({q, repeat(rules_.use("length-char"), lo, max), q});
}

Result<std::string> Converter::format_body(const Json& format, const std::string& ptr) {
  if (!format.is_string())
    return bad_keyword(ptr, "format", "must be a string");
  const std::string f = format.get<std::string>();
  if (f == "date")
    return rules_.use("date-string");
  if (f == "time")
    return rules_.use("time-string");
  if (f == "date-time")
    return rules_.use("date-time-string");
  if (f == "uuid")
    return rules_.use("uuid-string");
  return unsupported("the format '" + f + "' " + where(at(ptr, "format")) +
                     " is not supported (date, time, date-time and uuid are)");
}

Result<std::string> Converter::pattern_body(const Json& pattern, const std::string& ptr) {
  if (!pattern.is_string())
    return invalid_argument("the pattern " + where(ptr) + " must be a string");
  PSHARD_ASSIGN_OR_RETURN(std::vector<RegexBranch> branches,
                          parse_regex(pattern.get<std::string>(), ptr));
  std::vector<std::string> alts;
  for (const RegexBranch& b : branches) {
    PSHARD_ASSIGN_OR_RETURN(std::string core, lower_regex(b.re, ptr));
    // Unanchored, a pattern matches anywhere in the string: any text may come around.
    const std::string any = rules_.use("char") + std::string("*");
    if (core.empty() && !(b.anchored_start && b.anchored_end)) {
      alts.push_back(any);
      continue;
    }
    alts.push_back(seq({b.anchored_start ? "" : any, in_seq(core), b.anchored_end ? "" : any}));
  }
  const std::string q = literal("\"");
  return seq({q, group(alts), q});
}

// --- numbers ---

Result<std::string> Converter::number_body(const Json& s, const std::string& ptr, bool integer) {
  BoundReader reader(s, ptr, integer);
  PSHARD_ASSIGN_OR_RETURN(std::optional<Bound> lower, reader.read(/*lower=*/true));
  PSHARD_ASSIGN_OR_RETURN(std::optional<Bound> upper, reader.read(/*lower=*/false));
  if (!lower && !upper)
    return rules_.use(integer ? "integer" : "number");
  const bool empty = lower && upper &&
                     (lower->value > upper->value ||
                      (lower->value == upper->value && (lower->exclusive || upper->exclusive)));
  if (empty)
    return invalid_argument(std::string("no ") + (integer ? "integer" : "number") +
                            " lies between the minimum and the maximum " + where(ptr));
  std::vector<std::string> alts;
  if (integer)
    alts = integer_range(lower ? std::optional<int64_t>(lower->value) : std::nullopt,
                         upper ? std::optional<int64_t>(upper->value) : std::nullopt);
  else
    alts = number_range(lower, upper);
  return join(alts, " | ");
}

} // namespace pshard::json_grammar

namespace pshard {
namespace {

using json_grammar::Json;

constexpr size_t kMaxJsonDepth = 1000; // see nesting_depth()

// Why text is not JSON, from the parser's SAX interface (which reports instead of
// throwing): "parse error at line 1, column 12: syntax error ...".
class JsonErrorFinder : public nlohmann::json_sax<Json> {
public:
  std::string message = "the schema is not valid JSON";

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (const size_t end = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && end != std::string::npos)
      what.erase(0, end + 2);
    message = "the schema is not valid JSON: " + what;
    return false;
  }
};

// The deepest nesting of arrays and objects in `j`, walked without recursion: copying,
// comparing and printing JSON values recurse, so deeper text is refused before them.
size_t nesting_depth(const Json& j) {
  size_t deepest = 0;
  std::vector<std::pair<const Json*, size_t>> stack{{&j, 1}};
  while (!stack.empty()) {
    const auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured())
      continue;
    deepest = std::max(deepest, depth);
    for (const Json& kid : *v)
      stack.emplace_back(&kid, depth + 1);
  }
  return deepest;
}

} // namespace

Result<std::string> json_schema_to_gbnf(std::string_view schema_json) {
  const Json doc = Json::parse(schema_json.begin(), schema_json.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    JsonErrorFinder finder;
    static_cast<void>(Json::sax_parse(schema_json.begin(), schema_json.end(), &finder));
    return invalid_argument(finder.message);
  }
  if (nesting_depth(doc) > kMaxJsonDepth)
    return unsupported("the schema's JSON is nested deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels");
  return json_grammar::Converter(doc).run();
}

std::string json_object_gbnf() {
  json_grammar::RuleSet rules;
  rules.define("root", rules.use("object"));
  return rules.text();
}

} // namespace pshard
