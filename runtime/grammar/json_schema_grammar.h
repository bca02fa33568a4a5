// JSON Schema -> GBNF (grammar.h): the grammar whose sentences are JSON texts valid under
// a schema, for OpenAI's `response_format: {"type": "json_schema"}` and llama.cpp-style
// `--json-schema`.
//
//   PSHARD_ASSIGN_OR_RETURN(std::string gbnf, json_schema_to_gbnf(R"({
//       "type": "object",
//       "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
//       "required": ["name"]})"));
//   // root ::= "{" ws "\"name\"" ws ":" ws string ws ( "," ws "\"age\"" ws ":" ws age ws )? "}"
//   // age ::= "0" | [1-9] [0-9]{0,15}
//   // ... ws, string, char
//
// The grammar generates a subset of the valid instances, never an invalid one: where a
// constraint cannot be expressed exactly it is either narrowed (the choices below) or
// refused with kUnsupported naming the keyword and its JSON pointer. No validation keyword
// is silently ignored.
//
// Layout of the generated JSON: no whitespace before the value or after it; between
// tokens `ws ::= | " " | "\n" [ \t]{0,20}` (bounded, so a model cannot loop on spaces).
// Numbers have at most 16 integer digits, 16 fraction digits and 3 exponent digits.
// Rule names come from the schema: `root`, property names (`age`, nested `address-city`),
// `$defs` names (`node`), `item` for array items, and the shared `value`, `object`,
// `array`, `string`, `char`, `number`, `integer`, `boolean`, `null`, `ws`.
//
// Supported:
// - `true` / `{}`: any JSON value. `type`: string, number, integer, boolean, null, object,
//   array, or an array of them. Without `type`, the types whose keywords appear (e.g.
//   `properties` -> object, `minLength` -> string), or any value if none do.
// - object: `properties` (in the schema's order; a property whose schema is false may
//   not appear), `required` (listed ones must appear, the others may be left out; the
//   order stays the schema's), `additionalProperties`: false, true or a schema (extra
//   keys come after the listed ones; an extra key is a string of unescaped characters
//   that is not a listed name; repeated extra keys are not prevented). When
//   `additionalProperties` is absent it is taken as false (OpenAI strict mode's rule)
//   unless the object lists no properties, which then means any object.
// - array: `items` (a schema, or a draft-4 array of schemas with `additionalItems`),
//   `prefixItems`, `minItems`, `maxItems` (up to 1000), `uniqueItems: false`. After
//   `prefixItems` without `items`, no further items (as for additionalProperties).
// - string: `minLength` / `maxLength` (up to 1000 characters), `format` date, time,
//   date-time, uuid (RFC 3339 / RFC 4122 shapes, days per month and leap years checked;
//   other formats are refused), `pattern` (ECMAScript syntax, a subset: literals, escapes
//   \d \w \s \D \W \S \n \t \xHH \uHHHH, `.`, classes, groups `( )` `(?: )` `(?<name> )`,
//   `|`, `* + ? {m} {m,} {m,n}` greedy or lazy (counts up to 1000; a repeated part that
//   can match the empty string is rewritten without it), `^` at the start and `$` at the
//   end of the pattern or of a top-level `|` branch; an unanchored end allows any text
//   there). At most one of pattern, format and the length bounds in one schema. \s takes
//   only characters both ECMAScript and Python call space, \S none that either does.
//   Strings from patterns, formats and enums are written in one JSON form: characters as
//   they are, escapes only where JSON needs them (\" \\ \b \f \n \r \t, else \u00XX).
// - number / integer: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`
//   (numbers, or draft-4 booleans). Integers take any bounds (enumerated as digit
//   patterns); numbers take whole-number bounds only, and a bounded number has no
//   exponent. Bounds past 16 digits that would need longer numbers are refused.
// - `enum` / `const` of any JSON values (each as its JSON text), filtered by a sibling
//   `type`.
// - `anyOf`, `oneOf` (as alternatives: oneOf's "exactly one" is not enforced, so
//   overlapping branches are generated as anyOf), with sibling keywords merged into each
//   branch; `allOf` merged into one schema (properties and required joined, types
//   intersected, other keywords must agree).
// - `$ref`: local JSON pointers (`#`, `#/$defs/NAME`, `#/definitions/NAME`, ...); each
//   target becomes a named rule, so recursion works.
// - Ignored as annotations: title, description, default, examples, $schema, $id,
//   $anchor, $comment, deprecated, readOnly, writeOnly, content*, $defs / definitions
//   (read only through $ref), `format` on non-strings, and keywords that JSON Schema does
//   not define (as the specification says).
//
// Refused with kUnsupported: multipleOf, not, if / then / else, patternProperties,
// propertyNames, dependentRequired, dependentSchemas, dependencies, minProperties,
// maxProperties, unevaluatedProperties, unevaluatedItems, contains, minContains,
// maxContains, uniqueItems: true, $dynamicRef, $recursiveRef, remote or anchor $refs,
// `required` names that `properties` does not list, enum / const next to constraints
// other than `type`, anyOf next to oneOf, allOf parts that give one keyword differently
// (or one with additionalProperties next to one listing more properties), regex
// lookaround, backreferences, word boundaries, Unicode property and control escapes,
// octal escapes, inline flags, possessive quantifiers, an empty class `[]`, counts above
// 1000, property names over 256 characters next to additionalProperties, schemas nested
// deeper than 200 levels and JSON deeper than 1000.
//
// kInvalidArgument: text that is not JSON, a schema that is not an object or boolean, a
// keyword of the wrong shape (naming its JSON pointer, e.g. `/properties/age/type`), an
// unknown type, a $ref that leads nowhere, a malformed pattern, and schemas no value
// satisfies (`false`, minimum above maximum, an empty enum).
//
// A schema that refers to itself before matching any text (`{"anyOf": [{"$ref": "#"}]}`)
// converts, but parse_gbnf refuses the result as left-recursive.
#pragma once

#include "runtime/core/status.h"

#include <string>
#include <string_view>

namespace pshard {

// GBNF text (grammar.h's dialect, start rule `root`) whose sentences are the JSON texts
// valid under `schema_json` (a JSON Schema as JSON text).
Result<std::string> json_schema_to_gbnf(std::string_view schema_json);

// GBNF for any JSON object (response_format {"type": "json_object"}).
std::string json_object_gbnf();

} // namespace pshard
