// json_schema_to_gbnf: each schema's grammar, compiled by parse_gbnf and walked by the
// real GrammarMatcher, must take the JSON texts the schema allows and refuse the ones it
// does not; patterns are checked against std::regex (ECMAScript) and numeric bounds
// against the numbers' values; bad and unsupported schemas get the errors they should.
#include "runtime/grammar/grammar.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/json_schema_grammar.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace pshard {
namespace {

struct Compiled {
  std::string gbnf;
  std::shared_ptr<const Grammar> grammar; // null when a step failed
};

Compiled compile(std::string_view schema) {
  Compiled c;
  Result<std::string> gbnf = json_schema_to_gbnf(schema);
  EXPECT_TRUE(gbnf.ok()) << gbnf.status().to_string() << "\nschema: " << schema;
  if (!gbnf.ok())
    return c;
  c.gbnf = *gbnf;
  Result<Grammar> g = parse_gbnf(c.gbnf);
  EXPECT_TRUE(g.ok()) << g.status().to_string() << "\n" << c.gbnf;
  if (g.ok())
    c.grammar = std::make_shared<const Grammar>(std::move(g).value());
  return c;
}

bool accepts(const Compiled& c, std::string_view text) {
  if (!c.grammar)
    return false;
  GrammarMatcher m(c.grammar);
  return m.accept(text) && m.can_end();
}

// Every text in `valid` is a sentence of the schema's grammar, none in `invalid` is.
void expect_language(std::string_view schema, const std::vector<std::string>& valid,
                     const std::vector<std::string>& invalid) {
  const Compiled c = compile(schema);
  ASSERT_TRUE(c.grammar);
  for (const std::string& v : valid)
    EXPECT_TRUE(accepts(c, v)) << "should accept: " << v << "\n" << c.gbnf;
  for (const std::string& v : invalid)
    EXPECT_FALSE(accepts(c, v)) << "should reject: " << v << "\n" << c.gbnf;
}

Status error_of(std::string_view schema) {
  Result<std::string> gbnf = json_schema_to_gbnf(schema);
  EXPECT_FALSE(gbnf.ok()) << "converted: " << schema << "\n" << (gbnf.ok() ? *gbnf : "");
  return gbnf.ok() ? Status() : gbnf.status();
}

void expect_error(std::string_view schema, StatusCode code,
                  const std::vector<std::string>& mentions) {
  const Status s = error_of(schema);
  EXPECT_EQ(s.code(), code) << s.to_string() << "\nschema: " << schema;
  for (const std::string& m : mentions)
    EXPECT_NE(s.message().find(m), std::string::npos) << "'" << m << "' not in: " << s.message();
}

// --- objects ---

constexpr std::string_view kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "full name"},
    "age": {"type": "integer", "minimum": 0},
    "email": {"type": "string"},
    "admin": {"type": "boolean"}
  },
  "required": ["name", "admin"]
})";

TEST(JsonSchemaGrammar, PersonTakesRequiredAndOptionalPropertiesInOrder) {
  expect_language(kPerson,
                  {
                      R"({"name":"Ann","admin":true})",
                      R"({"name":"Ann","age":31,"admin":false})",
                      R"({"name":"Ann","age":0,"email":"a@b.c","admin":true})",
                      R"({"name":"Ann","email":"","admin":false})",
                      "{ \"name\": \"Ann\",\n  \"admin\": true }",
                      R"({"name":"Jos\u00e9 \"J\" \\","admin":true})",
                  },
                  {
                      R"({"name":"Ann"})",                              // admin missing
                      R"({"admin":true})",                              // name missing
                      R"({"admin":true,"name":"Ann"})",                 // out of order
                      R"({"name":"Ann","age":-1,"admin":true})",        // minimum 0
                      R"({"name":"Ann","age":1.5,"admin":true})",       // integer
                      R"({"name":"Ann","admin":true,"extra":1})",       // additionalProperties
                      R"({"name":"Ann","age":1,"age":2,"admin":true})", // repeated
                      R"({"name":"Ann","admin":"yes"})",                // boolean
                      R"({"name":"Ann",,"admin":true})", R"({"name":"Ann","admin":true)",
                      R"({"name":"Ann","admin":true} )", // nothing after the value
                      R"({"name":"A)"
                      "\n"
                      R"(","admin":true})", // raw newline in a string
                  });
}

TEST(JsonSchemaGrammar, AllOptionalPropertiesMayAllBeLeftOut) {
  expect_language(R"({"properties": {"a": {"type": "integer"}, "b": {"type": "null"},
                                     "c": {"type": "string"}}})",
                  {"{}", R"({"a":1})", R"({"b":null})", R"({"c":"x"})", R"({"a":1,"c":"x"})",
                   R"({"b":null,"c":""})", R"({"a":-7,"b":null,"c":"z"})"},
                  {R"({,})", R"({"c":"x","a":1})", R"({"a":1,})", R"({"d":1})", "[]", "null"});
}

TEST(JsonSchemaGrammar, NestedObjectsGetNestedRuleNames) {
  constexpr std::string_view schema = R"({
    "type": "object",
    "properties": {
      "person": {
        "type": "object",
        "properties": {
          "age": {"type": "integer", "minimum": 18, "maximum": 130},
          "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
            "required": ["city", "zip"]
          }
        },
        "required": ["address"]
      }
    },
    "required": ["person"]
  })";
  const Compiled c = compile(schema);
  EXPECT_NE(c.gbnf.find("\nperson ::= "), std::string::npos) << c.gbnf;
  EXPECT_NE(c.gbnf.find("\nperson-age ::= "), std::string::npos) << c.gbnf;
  EXPECT_NE(c.gbnf.find("\nperson-address ::= "), std::string::npos) << c.gbnf;
  EXPECT_NE(c.gbnf.find("\nperson-address-zip ::= "), std::string::npos) << c.gbnf;
  EXPECT_EQ(c.gbnf.rfind("root ::= ", 0), 0u) << c.gbnf;
  expect_language(
      schema,
      {R"({"person":{"address":{"city":"Oslo","zip":"01234"}}})",
       R"({"person":{"age":18,"address":{"city":"","zip":"99999"}}})",
       R"({"person":{"age":130,"address":{"city":"X","zip":"12345"}}})",
       "{\n  \"person\": {\n    \"address\": {\"city\": \"X\", \"zip\": \"12345\"}\n  }\n}"},
      {R"({"person":{"age":17,"address":{"city":"X","zip":"12345"}}})",
       R"({"person":{"age":131,"address":{"city":"X","zip":"12345"}}})",
       R"({"person":{"address":{"city":"X","zip":"1234"}}})",
       R"({"person":{"address":{"city":"X","zip":"123456"}}})",
       R"({"person":{"address":{"city":"X"}}})", R"({"person":{}})", "{}"});
}

TEST(JsonSchemaGrammar, AdditionalPropertiesSchemaAddsOtherKeysAfterTheListedOnes) {
  expect_language(R"({"type": "object",
                      "properties": {"id": {"type": "integer"}, "ok": {"type": "boolean"}},
                      "required": ["id"],
                      "additionalProperties": {"type": "number"}})",
                  {R"({"id":1})", R"({"id":1,"ok":true})", R"({"id":1,"x":2.5})",
                   R"({"id":1,"ok":false,"x":2,"y":-3e2})", R"({"id":1,"i":0,"idx":1,"o":3})",
                   R"({"id":1,"":0})"},
                  {R"({"id":1,"x":"s"})", // extra values are numbers
                   R"({"x":1,"id":1})",   // listed keys first
                   R"({"id":1,"id":2})",  // an extra key is never a listed one
                   R"({"id":1,"ok":1})",  // a listed key keeps its own schema
                   R"({"id":1,"x":1,"ok":true})"});
  // With nothing listed, any keys.
  expect_language(R"({"type": "object", "additionalProperties": {"type": "string"}})",
                  {"{}", R"({"a":"b"})", R"({"a\"":"b","c":""})"}, {R"({"a":1})", "[]"});
  // true: any value under any other key.
  expect_language(R"({"properties": {"a": {"type": "null"}}, "additionalProperties": true})",
                  {"{}", R"({"a":null})", R"({"a":null,"b":[1,{"c":{}}]})", R"({"b":1})"},
                  {R"({"a":1})", R"({"b":1,"a":null})"});
}

TEST(JsonSchemaGrammar, ObjectWithoutPropertiesIsAnyObject) {
  expect_language(R"({"type": "object"})",
                  {"{}", R"({"a":1,"b":[true,null,"x",{"c":-0.5e3}]})", "{ }"},
                  {"[]", "1", R"({"a"})", R"({"a":})"});
  expect_language(R"({"type": "object", "additionalProperties": false})", {"{}", "{ }"},
                  {R"({"a":1})"});
}

TEST(JsonSchemaGrammar, PropertyNamesAreEscapedAndSanitised) {
  constexpr std::string_view schema = R"({"type": "object",
      "properties": {"first name": {"type": "string", "maxLength": 3},
                     "say \"hi\"": {"type": "integer", "maximum": 5},
                     "ünï": {"type": "string", "minLength": 1}},
      "required": ["first name", "say \"hi\"", "ünï"]})";
  const Compiled c = compile(schema);
  EXPECT_NE(c.gbnf.find("\nfirst-name ::= "), std::string::npos) << c.gbnf;
  expect_language(schema, {R"({"first name":"Al","say \"hi\"":5,"ünï":"x"})"},
                  {R"({"first name":"Alan","say \"hi\"":5,"ünï":"x"})",
                   R"({"first name":"Al","say \"hi\"":6,"ünï":"x"})",
                   R"({"first name":"Al","say \"hi\"":5,"ünï":""})"});
}

// --- arrays ---

TEST(JsonSchemaGrammar, ArrayItemsWithMinAndMaxItems) {
  expect_language(
      R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4})",
      {"[1,2]", "[1, 2, 3]", "[1,2,3,4]", "[ 1 ,\n 2 ]"},
      {"[]", "[1]", "[1,2,3,4,5]", "[1,\"2\"]", "[1,2,]", "[,1,2]"});
  expect_language(R"({"type": "array", "items": {"type": "string"}})",
                  {"[]", R"(["a"])", R"(["a","b","c"])"}, {R"([1])", R"(["a",])"});
  expect_language(R"({"type": "array", "maxItems": 0})", {"[]"}, {"[1]"});
  expect_language(R"({"type": "array", "minItems": 1})", {"[1]", R"([{},[],"x"])"}, {"[]"});
}

TEST(JsonSchemaGrammar, PrefixItemsMakeATuple) {
  expect_language(R"({"type": "array",
                      "prefixItems": [{"type": "string"}, {"type": "integer"}],
                      "minItems": 1})",
                  {R"(["a"])", R"(["a",1])"}, {"[]", R"(["a",1,2])", R"([1])", R"(["a","b"])"});
  expect_language(R"({"type": "array",
                      "prefixItems": [{"type": "string"}],
                      "items": {"type": "boolean"}, "maxItems": 3})",
                  {"[]", R"(["a"])", R"(["a",true])", R"(["a",true,false])"},
                  {R"(["a",true,false,true])", R"([true])", R"(["a","b"])"});
  // Draft 4: items as an array, additionalItems for the rest.
  expect_language(R"({"items": [{"type": "null"}], "additionalItems": {"type": "integer"}})",
                  {"[]", "[null]", "[null,1,2]"}, {"[1]", "[null,null]"});
}

// --- enum, const, anyOf ---

TEST(JsonSchemaGrammar, EnumOfMixedTypesIsItsValuesJsonText) {
  constexpr std::string_view schema =
      R"({"enum": ["red", 42, -1.5, true, null, {"k": [1, "v"]}, ["x"], "say \"no\"", "é"]})";
  expect_language(schema,
                  {R"("red")", "42", "-1.5", "true", "null", R"({"k":[1,"v"]})", R"(["x"])",
                   R"("say \"no\"")", R"("é")"},
                  {R"("Red")", "43", "false", R"("")", R"({"k":[1]})", "-1.50", R"("redd")"});
  // A sibling type keeps the values of that type.
  expect_language(R"({"type": "string", "enum": ["a", 1, "b"]})", {R"("a")", R"("b")"}, {"1"});
}

TEST(JsonSchemaGrammar, ConstIsOneValue) {
  expect_language(R"({"type": "object", "properties": {"kind": {"const": "circle"},
                      "r": {"type": "number"}}, "required": ["kind", "r"]})",
                  {R"({"kind":"circle","r":1})"}, {R"({"kind":"square","r":1})"});
  expect_language(R"({"const": {"a": [1, 2]}})", {R"({"a":[1,2]})"}, {R"({"a":[2,1]})"});
}

TEST(JsonSchemaGrammar, AnyOfAndOneOfAreAlternatives) {
  expect_language(R"({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"},
                                 {"type": "object", "properties": {"n": {"type": "integer"}},
                                  "required": ["n"]}]})",
                  {R"("ab")", "null", R"({"n":3})"}, {R"("abc")", "3", R"({})", "[]"});
  expect_language(R"({"oneOf": [{"const": 1}, {"const": "one"}]})", {"1", R"("one")"},
                  {"2", R"("two")"});
  // Sibling keywords hold in every branch.
  expect_language(R"({"type": "object", "required": ["a"],
                      "properties": {"a": {"type": "integer"}},
                      "anyOf": [{"properties": {"a": {"minimum": 5}}},
                                {"properties": {"a": {"maximum": -5}}}]})",
                  {R"({"a":5})", R"({"a":-5})", R"({"a":100})"}, {R"({"a":0})", "{}"});
}

TEST(JsonSchemaGrammar, TypeArraysAreAlternatives) {
  expect_language(R"({"type": ["string", "null"], "maxLength": 1})", {R"("")", R"("a")", "null"},
                  {R"("ab")", "0"});
  expect_language(R"({"type": ["integer", "boolean"], "minimum": 0, "maximum": 3})",
                  {"0", "3", "true"}, {"4", "-1", "null"});
}

TEST(JsonSchemaGrammar, AllOfMergesObjectSchemas) {
  expect_language(
      R"({
      "$defs": {"named": {"type": "object", "properties": {"name": {"type": "string"}},
                          "required": ["name"]}},
      "allOf": [{"$ref": "#/$defs/named"},
                {"properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"]}]})",
      {R"({"name":"a","id":1})"},
      {R"({"name":"a"})", R"({"id":1})", R"({"name":"a","id":0})", R"({"id":1,"name":"a"})"});
  // Integer and number intersect to integer; both bounds hold.
  expect_language(R"({"allOf": [{"type": "number", "minimum": 0}, {"type": "integer"}]})",
                  {"0", "7"}, {"-1", "1.5"});
}

// --- $ref ---

TEST(JsonSchemaGrammar, RecursiveDefsMakeATree) {
  constexpr std::string_view schema = R"({
    "$ref": "#/$defs/node",
    "$defs": {
      "node": {
        "type": "object",
        "properties": {
          "value": {"type": "integer"},
          "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        },
        "required": ["value"]
      }
    }
  })";
  const Compiled c = compile(schema);
  EXPECT_NE(c.gbnf.find("root ::= node\n"), std::string::npos) << c.gbnf;
  EXPECT_NE(c.gbnf.find("\nnode ::= "), std::string::npos) << c.gbnf;
  expect_language(schema,
                  {R"({"value":1})", R"({"value":1,"children":[]})",
                   R"({"value":1,"children":[{"value":2},{"value":3,"children":[{"value":4}]}]})"},
                  {R"({"value":1,"children":[{}]})", R"({"value":1,"children":[{"value":"x"}]})",
                   R"({"children":[]})"});
}

TEST(JsonSchemaGrammar, RefToRootAndToDefinitions) {
  expect_language(R"({"type": "object",
                      "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
                                     "tag": {"$ref": "#/definitions/tag"}},
                      "required": ["next"],
                      "definitions": {"tag": {"enum": ["a", "b"]}}})",
                  {R"({"next":null})", R"({"next":{"next":null,"tag":"b"},"tag":"a"})"},
                  {R"({"next":{}})", R"({"next":null,"tag":"c"})"});
}

// --- numbers ---

TEST(JsonSchemaGrammar, IntegerMinimumZeroHasNoSign) {
  expect_language(R"({"type": "integer", "minimum": 0})", {"0", "7", "10", "9999999999999999"},
                  {"-1", "-0", "01", "1.0", "1e3", "+1", "10000000000000000" /* 17 digits */});
  expect_language(R"({"type": "integer"})", {"0", "-0", "-12", "1234567890123456"},
                  {"1.5", "--1", "00", "-", "12345678901234567"});
}

TEST(JsonSchemaGrammar, IntegerSmallRange) {
  expect_language(R"({"type": "integer", "minimum": 1, "maximum": 12})", {"1", "9", "10", "12"},
                  {"0", "13", "20", "012", "-1", "100"});
}

// Every integer in a window, against the bounds, for ranges with every shape of edge.
TEST(JsonSchemaGrammar, IntegerRangesMatchTheirBoundsExactly) {
  struct Range {
    const char* keywords;
    std::optional<long> lo, hi;
  };
  const Range ranges[] = {
      {R"("minimum": 1, "maximum": 12)", 1, 12},
      {R"("minimum": -12, "maximum": 7)", -12, 7},
      {R"("minimum": 0, "maximum": 100)", 0, 100},
      {R"("minimum": -100, "maximum": -5)", -100, -5},
      {R"("minimum": 95, "maximum": 1234)", 95, 1234},
      {R"("minimum": 7)", 7, std::nullopt},
      {R"("maximum": -3)", std::nullopt, -3},
      {R"("maximum": 250)", std::nullopt, 250},
      {R"("exclusiveMinimum": 9, "exclusiveMaximum": 1000)", 10, 999},
      {R"("minimum": 2.5, "maximum": 10.5)", 3, 10},
      {R"("minimum": 5, "exclusiveMinimum": true, "maximum": 50)", 6, 50}, // draft 4
      {R"("minimum": 199, "maximum": 1201)", 199, 1201},
      {R"("minimum": 0, "maximum": 0)", 0, 0},
  };
  for (const Range& r : ranges) {
    const std::string schema = std::string(R"({"type": "integer", )") + r.keywords + "}";
    const Compiled c = compile(schema);
    ASSERT_TRUE(c.grammar) << schema;
    for (long n = -1500; n <= 1500; ++n) {
      const bool in = (!r.lo || n >= *r.lo) && (!r.hi || n <= *r.hi);
      ASSERT_EQ(accepts(c, std::to_string(n)), in) << schema << " on " << n << "\n" << c.gbnf;
    }
  }
}

// Decimals (valid JSON, no exponent) against the bounds of `number` schemas.
TEST(JsonSchemaGrammar, NumberBoundsMatchTheValues) {
  struct Range {
    const char* keywords;
    std::optional<double> lo, hi;
    bool lo_excl, hi_excl;
  };
  const Range ranges[] = {
      {R"("minimum": 0, "maximum": 1)", 0, 1, false, false},
      {R"("exclusiveMinimum": 0)", 0, std::nullopt, true, false},
      {R"("minimum": -5, "exclusiveMaximum": 3)", -5, 3, false, true},
      {R"("exclusiveMinimum": -2, "maximum": -1)", -2, -1, true, false},
      {R"("maximum": 10)", std::nullopt, 10, false, false},
      {R"("exclusiveMinimum": 1, "exclusiveMaximum": 2)", 1, 2, true, true},
  };
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) {
    std::string t = rng() % 3 == 0 ? "-" : "";
    const int int_part = static_cast<int>(rng() % 4 == 0 ? rng() % 30 : rng() % 4);
    t += std::to_string(int_part);
    if (rng() % 2) {
      t += '.';
      for (int d = 0, n = 1 + static_cast<int>(rng() % 3); d < n; ++d)
        t += static_cast<char>('0' + (rng() % 3 == 0 ? 0 : rng() % 10));
    }
    if (t[0] == '-' && std::strtod(t.c_str(), nullptr) == 0)
      continue; // -0 is zero, which the grammar writes without the sign
    texts.push_back(t);
  }
  for (const Range& r : ranges) {
    const std::string schema = std::string(R"({"type": "number", )") + r.keywords + "}";
    const Compiled c = compile(schema);
    ASSERT_TRUE(c.grammar) << schema;
    for (const std::string& t : texts) {
      const double v = std::strtod(t.c_str(), nullptr);
      const bool in = (!r.lo || (r.lo_excl ? v > *r.lo : v >= *r.lo)) &&
                      (!r.hi || (r.hi_excl ? v < *r.hi : v <= *r.hi));
      ASSERT_EQ(accepts(c, t), in) << schema << " on " << t << "\n" << c.gbnf;
    }
  }
}

TEST(JsonSchemaGrammar, NumbersHaveBoundedDigits) {
  expect_language(R"({"type": "number"})",
                  {"0", "-0.5", "1e5", "1E-300", "12.25e+10", "1234567890123456.1234567890123456"},
                  {"1.", ".5", "01", "1e", "1e1234", "12345678901234567", "0.12345678901234567",
                   "NaN", "Infinity", "+1"});
}

// --- strings ---

TEST(JsonSchemaGrammar, StringLengthBoundsCountCharacters) {
  expect_language(R"({"type": "string", "minLength": 2, "maxLength": 3})",
                  {R"("ab")", R"("abc")", R"("\n\"")", R"("ü€")", R"("a😀")", R"("\u00e9b")"},
                  {R"("")", R"("a")", R"("abcd")", R"("\ud83d\ude00")" /* one character */});
  expect_language(R"({"type": "string", "maxLength": 0})", {R"("")"}, {R"("a")"});
  expect_language(R"({"type": "string", "minLength": 1})", {R"("a")", R"("abcdefgh")"}, {R"("")"});
}

TEST(JsonSchemaGrammar, PatternWithClassesCountsAndAnchors) {
  expect_language(R"({"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2,4}$"})",
                  {R"("ABC-12")", R"("XYZ-1234")", R"("QQQ-000")"},
                  {R"("AB-12")", R"("ABCD-12")", R"("ABC-1")", R"("ABC-12345")", R"("abc-12")",
                   R"("ABC12")", R"( "ABC-12")", R"("ABC-12 ")"});
}

TEST(JsonSchemaGrammar, PatternWithoutAnchorsMatchesAnywhere) {
  expect_language(R"({"type": "string", "pattern": "ab+c"})",
                  {R"("abc")", R"("xxabbbcyy")", R"("\n abc \"")"},
                  {R"("ac")", R"("abx")", R"("")"});
  expect_language(R"({"type": "string", "pattern": "^ab"})", {R"("ab")", R"("abz")"}, {R"("zab")"});
  expect_language(R"({"type": "string", "pattern": "\\.json$"})", {R"("a.json")", R"(".json")"},
                  {R"("a.jsonx")", R"("ajson")"});
}

// Patterns against std::regex (ECMAScript), on random strings that include the
// characters JSON escapes.
TEST(JsonSchemaGrammar, PatternsAgreeWithStdRegex) {
  const char* patterns[] = {
      R"(^[A-Z]{3}-[0-9]{2,4}$)",
      R"(^(ab|c)*d?$)",
      R"(a+b)",
      R"(^\d{1,2}(\.\d+)?$)",
      R"(^[^a-c]x|y$)",
      R"(^(?:ab|ba)+$)",
      R"(^\w+@\w+\.com$)",
      R"(colou?r)",
      R"(^a{2,}$)",
      R"(^[a\-z]$)",
      R"(^.b.$)",
      R"(^\S+\s\S+$)",
      R"(^["\\]+$)",
      R"(^[^"]*$)",
      R"(^(a|b|)c$)",
      R"(^\W{2}$)",
      R"(^[\d.-]+$)",
      R"(^(?<year>\d{2})-\D$)", // std::regex has no named groups: checked as (?:...)
      R"(^x*?y{1,2}?$)",
      R"(^(a*)*$)", // repeating parts that can match empty
      R"(^(a?b?)+c$)",
      R"(^(x{0,2}|y)*z$)",
      R"(^((a|)b?)*$)",
      R"(^(()|a)*b()$)",
      R"()",
  };
  const std::string alphabet = "abcrdoluyxz@.-AZ09 \"\\\t\n";
  std::mt19937 rng(11);
  std::vector<std::string> texts = {"",     "ab", "abc",   "color", "colour", "a@b.com", "ABC-123",
                                    "aa",   "a",  "1.5",   "12",    "ba",     "abab",    "x\"",
                                    "\\\"", "c",  "\nb\n", "abz",   "a\tb c", "\tb\t",   "\"b\\"};
  for (int i = 0; i < 1500; ++i) {
    std::string t;
    for (size_t n = rng() % 7; n > 0; --n)
      t += alphabet[rng() % alphabet.size()];
    texts.push_back(t);
  }
  auto json_string = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\')
        out += '\\', out += ch;
      else if (ch == '\n')
        out += "\\n";
      else if (ch == '\t')
        out += "\\t";
      else
        out += ch;
    }
    return out + "\"";
  };
  auto json_escaped_pattern = [&](const std::string& p) {
    return json_string(p); // the pattern as a JSON string inside the schema
  };
  for (const char* pattern : patterns) {
    const std::string schema =
        R"({"type": "string", "pattern": )" + json_escaped_pattern(pattern) + "}";
    const Compiled c = compile(schema);
    ASSERT_TRUE(c.grammar) << schema;
    std::string oracle = pattern;
    if (const size_t named = oracle.find("(?<year>"); named != std::string::npos)
      oracle.replace(named, 8, "(?:");
    const std::regex re(oracle, std::regex::ECMAScript);
    for (const std::string& t : texts)
      ASSERT_EQ(accepts(c, json_string(t)), std::regex_search(t, re))
          << "pattern " << pattern << " on " << json_string(t) << "\n"
          << c.gbnf;
  }
}

TEST(JsonSchemaGrammar, DateTimeAndOtherFormats) {
  expect_language(R"({"type": "string", "format": "date-time"})",
                  {R"("2024-02-29T12:30:00Z")", R"("1999-12-31T23:59:59.123+05:30")",
                   R"("2023-04-30T00:00:00-00:00")"},
                  {R"("2023-02-29T12:30:00Z")", R"("2024-04-31T00:00:00Z")",
                   R"("2024-13-01T00:00:00Z")", R"("2024-01-01T24:00:00Z")",
                   R"("2024-01-01T12:00:00")", R"("2024-01-01 12:00:00Z")", R"("2024-01-01")"});
  expect_language(R"({"type": "string", "format": "date"})",
                  {R"("2000-02-29")", R"("2023-12-31")", R"("1900-02-28")"},
                  {R"("1900-02-29")", R"("2023-00-10")", R"("2023-06-31")", R"("23-06-01")"});
  expect_language(R"({"type": "string", "format": "time"})", {R"("08:15:00Z")"},
                  {R"("8:15:00Z")", R"("08:60:00Z")"});
  expect_language(
      R"({"type": "string", "format": "uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"},
      {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400")"});
}

// --- any value, whitespace, json_object ---

TEST(JsonSchemaGrammar, EmptySchemaAndTrueAreAnyJsonValue) {
  for (std::string_view schema : {"{}", "true", R"({"description": "anything", "title": "x"})"})
    expect_language(schema,
                    {"null", "true", "0", "-1.5e3", R"("s")", "[]", R"([1,[2,{"a":null}]])",
                     R"({"k":"v"})", "{\n  \"a\": [ 1 , 2 ]\n}"},
                    {"", "nul", "[1,]", "{'a':1}", "01", "[1 2]", R"({"a" 1})", " 1"});
}

TEST(JsonSchemaGrammar, WhitespaceBetweenTokensIsBounded) {
  const Compiled c = compile(R"({"type": "array", "items": {"type": "integer"}})");
  EXPECT_TRUE(accepts(c, "[1,\n" + std::string(20, ' ') + "2]"));
  EXPECT_FALSE(accepts(c, "[1,\n" + std::string(21, ' ') + "2]"));
  EXPECT_FALSE(accepts(c, "[1,  2]")); // one space, or a newline and indentation
  EXPECT_TRUE(accepts(c, "[ 1 , 2 ]"));
}

TEST(JsonSchemaGrammar, JsonObjectGrammarTakesAnyObjectOnly) {
  Result<Grammar> g = parse_gbnf(json_object_gbnf());
  ASSERT_TRUE(g.ok()) << g.status().to_string() << "\n" << json_object_gbnf();
  const Compiled c{json_object_gbnf(), std::make_shared<const Grammar>(std::move(g).value())};
  EXPECT_TRUE(accepts(c, "{}"));
  EXPECT_TRUE(accepts(c, R"({"a":[1,{"b":null}],"c":"d"})"));
  EXPECT_FALSE(accepts(c, "[]"));
  EXPECT_FALSE(accepts(c, R"("{}")"));
  EXPECT_EQ(json_object_gbnf().rfind("root ::= object\n", 0), 0u);
}

// --- errors ---

TEST(JsonSchemaGrammar, MalformedJsonSaysWhere) {
  expect_error(R"({"type": "object",)", StatusCode::kInvalidArgument, {"not valid JSON", "line 1"});
  expect_error("", StatusCode::kInvalidArgument, {"not valid JSON"});
  expect_error("{\"type\": \"string\"} x", StatusCode::kInvalidArgument, {"not valid JSON"});
  expect_error("\"\xff\"", StatusCode::kInvalidArgument, {"not valid JSON"});
}

TEST(JsonSchemaGrammar, MalformedSchemasNameTheirPointer) {
  expect_error(R"({"properties": {"age": {"type": "int"}}})", StatusCode::kInvalidArgument,
               {"/properties/age/type", "int"});
  expect_error(R"({"type": 3})", StatusCode::kInvalidArgument, {"/type"});
  expect_error(R"({"properties": []})", StatusCode::kInvalidArgument, {"/properties"});
  expect_error(R"({"type": "string", "minLength": -1})", StatusCode::kInvalidArgument,
               {"/minLength"});
  expect_error(R"({"type": "array", "items": 3})", StatusCode::kInvalidArgument, {"/items"});
  expect_error("[1]", StatusCode::kInvalidArgument, {"object or a boolean"});
  expect_error("false", StatusCode::kInvalidArgument, {"no value"});
  expect_error(R"({"type": "integer", "minimum": 5, "maximum": 3})", StatusCode::kInvalidArgument,
               {"minimum"});
  expect_error(R"({"enum": []})", StatusCode::kInvalidArgument, {"enum"});
  expect_error(R"({"type": "string", "pattern": "a(b"})", StatusCode::kInvalidArgument,
               {"/pattern", "malformed"});
  expect_error(R"({"type": "string", "pattern": "*a"})", StatusCode::kInvalidArgument,
               {"/pattern"});
}

TEST(JsonSchemaGrammar, UnsupportedKeywordsAreNamedNotIgnored) {
  expect_error(R"({"properties": {"age": {"type": "integer", "multipleOf": 5}}})",
               StatusCode::kUnsupported, {"multipleOf", "/properties/age/multipleOf"});
  for (const char* kw : {"not", "if", "patternProperties", "propertyNames", "minProperties",
                         "dependentRequired", "contains", "unevaluatedProperties"}) {
    const std::string schema = std::string(R"({"type": "object", ")") + kw + R"(": {}})";
    expect_error(schema, StatusCode::kUnsupported, {kw, std::string("/") + kw});
  }
  expect_error(R"({"type": "array", "uniqueItems": true})", StatusCode::kUnsupported,
               {"uniqueItems"});
  expect_error(R"({"type": "string", "format": "email"})", StatusCode::kUnsupported,
               {"email", "/format"});
  expect_error(R"({"type": "number", "minimum": 0.5})", StatusCode::kUnsupported, {"minimum"});
  expect_error(R"({"type": "object", "properties": {}, "required": ["a"]})",
               StatusCode::kUnsupported, {"'a'", "/required"});
  expect_error(R"({"type": "string", "pattern": "^a", "maxLength": 3})", StatusCode::kUnsupported,
               {"pattern"});
  expect_error(R"({"type": "string", "maxLength": 5000})", StatusCode::kUnsupported, {"maxLength"});
  expect_error(R"({"type": "string", "enum": ["a"], "maxLength": 3})", StatusCode::kUnsupported,
               {"maxLength"});
  // Accepted no-ops.
  EXPECT_TRUE(json_schema_to_gbnf(R"({"type": "array", "uniqueItems": false})").ok());
  EXPECT_TRUE(json_schema_to_gbnf(R"({"type": "string", "x-vendor": 1, "$comment": "c"})").ok());
}

TEST(JsonSchemaGrammar, UnsupportedRegexFeaturesAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(^(?=a)b$)", "lookaround"},
      {R"(^(?<!a)b$)", "lookaround"},
      {R"(^(a)\\1$)", "backreference"},
      {R"(^\\bword$)", "word boundary"},
      {R"(^\\p{L}+$)", "Unicode property"},
      {R"(^(?i)a$)", "(?i"},
      {R"(a^b)", "'^'"},
      {R"(a$b)", "'$'"},
      {R"(^a{1001}$)", "above 1000"},
      {R"(^a++$)", "possessive"},
  };
  for (const auto& [pattern, what] : cases)
    expect_error(std::string(R"({"type": "string", "pattern": ")") + pattern + "\"}",
                 StatusCode::kUnsupported, {what, "/pattern"});
  // Repeating a part that can match empty is rewritten, within a budget.
  std::string big = "(";
  for (int i = 0; i < 200; ++i)
    big += "a?";
  expect_error(R"({"type": "string", "pattern": ")" + big + ")*\"}", StatusCode::kUnsupported,
               {"too large"});
}

TEST(JsonSchemaGrammar, BadRefsAreRefused) {
  expect_error(R"({"$ref": "#/$defs/missing", "$defs": {}})", StatusCode::kInvalidArgument,
               {"#/$defs/missing", "leads nowhere", "/$ref"});
  expect_error(R"({"properties": {"a": {"$ref": "#/definitions/x/y"}},
                   "definitions": {"x": {"type": "string"}}})",
               StatusCode::kInvalidArgument, {"/properties/a/$ref"});
  expect_error(R"({"$ref": "other.json#/a"})", StatusCode::kUnsupported, {"other.json", "local"});
  expect_error(R"({"$ref": "#anchor"})", StatusCode::kUnsupported, {"anchor"});
  expect_error(R"({"$ref": 5})", StatusCode::kInvalidArgument, {"$ref"});
  // A recursive allOf cannot be merged.
  expect_error(R"({"allOf": [{"$ref": "#"}]})", StatusCode::kUnsupported, {"allOf"});
}

std::string nested(int levels, std::string_view open, std::string_view inner,
                   std::string_view close) {
  std::string out;
  for (int i = 0; i < levels; ++i)
    out += open;
  out += inner;
  for (int i = 0; i < levels; ++i)
    out += close;
  return out;
}

TEST(JsonSchemaGrammar, DeepSchemasAreRefusedNotOverflowed) {
  // Deeper than the walk goes (200 schemas), and deeper than JSON values are copied
  // (1000 levels) including inside enum values, which are data, not schemas.
  expect_error(nested(300, R"({"type": "array", "items": )", "{}", "}"), StatusCode::kUnsupported,
               {"deeper than 200"});
  expect_error(nested(100000, R"({"items": )", "{}", "}"), StatusCode::kUnsupported,
               {"deeper than 1000"});
  expect_error(R"({"enum": [)" + nested(100000, "[", "1", "]") + "]}", StatusCode::kUnsupported,
               {"deeper than 1000"});
  expect_error(R"({"pattern": ")" + nested(5000, "(", "a", ")") + "\"}", StatusCode::kUnsupported,
               {"nested"});
  // 150 levels convert, and the grammar takes an instance that deep.
  const Compiled c =
      compile(nested(150, R"({"type": "array", "items": )", R"({"type": "null"})", "}"));
  EXPECT_TRUE(accepts(c, nested(150, "[", "null", "]")));
  EXPECT_FALSE(accepts(c, nested(149, "[", "null", "]")));
}

TEST(JsonSchemaGrammar, ManyOptionalPropertiesShareTheirTails) {
  // Six optional properties before the required one: the rests become shared rules.
  constexpr std::string_view schema = R"({"type": "object",
      "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"},
                     "d": {"type": "integer"}, "e": {"type": "integer"}, "f": {"type": "integer"},
                     "g": {"type": "string"}, "h": {"type": "integer"}},
      "required": ["g"], "additionalProperties": {"type": "boolean"}})";
  const Compiled c = compile(schema);
  EXPECT_NE(c.gbnf.find("\ntail-"), std::string::npos) << c.gbnf;
  expect_language(schema,
                  {R"({"g":""})", R"({"a":1,"g":"x"})", R"({"f":1,"g":"x","h":2})",
                   R"({"a":1,"c":3,"e":5,"g":"x","z":true})", R"({"b":1,"g":"x","h":1,"y":false})",
                   R"({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":"x","h":8,"i":true,"j":false})"},
                  {"{}", R"({"a":1})", R"({"b":1,"a":1,"g":"x"})", R"({"g":"x","a":1})",
                   R"({"a":1,"g":"x","a":true})", R"({"g":"x","h":1,"z":1})"});
  // All optional, many: the empty object too.
  expect_language(R"({"properties": {"a": {"type": "null"}, "b": {"type": "null"},
                      "c": {"type": "null"}, "d": {"type": "null"}, "e": {"type": "null"},
                      "f": {"type": "null"}}})",
                  {"{}", R"({"f":null})", R"({"a":null,"f":null})", R"({"b":null,"c":null})"},
                  {R"({"f":null,"a":null})", R"({,"a":null})"});
}

TEST(JsonSchemaGrammar, FalsePropertyKeepsItsKeyOut) {
  expect_language(R"({"properties": {"a": {"type": "integer"}, "secret": false},
                      "additionalProperties": true})",
                  {"{}", R"({"a":1})", R"({"a":1,"other":2})"},
                  {R"({"secret":1})", R"({"a":1,"secret":1})"});
  expect_error(R"({"properties": {"a": false}, "required": ["a"]})", StatusCode::kInvalidArgument,
               {"'a'", "false"});
}

TEST(JsonSchemaGrammar, LongStringBoundsStayCheap) {
  const Compiled c = compile(R"({"type": "string", "minLength": 999, "maxLength": 1000})");
  EXPECT_TRUE(accepts(c, "\"" + std::string(1000, 'x') + "\""));
  EXPECT_TRUE(accepts(c, "\"" + std::string(999, 'x') + "\""));
  EXPECT_FALSE(accepts(c, "\"" + std::string(1001, 'x') + "\""));
  EXPECT_FALSE(accepts(c, "\"" + std::string(998, 'x') + "\""));
}

} // namespace
} // namespace pshard
