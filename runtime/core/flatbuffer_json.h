// The JSON view of pshard's size-prefixed FlatBuffers files (profiles, schedules),
// through the schema text embedded at build time. Header-only so pshard_core does
// not depend on FlatBuffers; only the readers that include it do.
//
//   PSHARD_ASSIGN_OR_RETURN(std::string json,
//       flatbuffer_to_json(schema_text::profile, "profile", profile.bytes().data()));
#pragma once

#include "runtime/core/status.h"

#include <flatbuffers/idl.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {
namespace detail {

// A fresh parser per call keeps this thread-safe without locks; parsing the schema
// text takes well under a millisecond.
inline Status parse_schema(flatbuffers::Parser* parser, const char* schema_text,
                           std::string_view what) {
  if (!parser->Parse(schema_text))
    return internal_error("the embedded " + std::string(what) +
                          " schema does not parse: " + parser->error_);
  return Status::ok_status();
}

} // namespace detail

// Every field visible (defaults included), enums by name, strict JSON.
inline Result<std::string> flatbuffer_to_json(const char* schema_text, std::string_view what,
                                              const uint8_t* size_prefixed_bytes) {
  flatbuffers::IDLOptions options;
  options.strict_json = true;
  options.output_default_scalars_in_json = true;
  options.output_enum_identifiers = true;
  options.size_prefixed = true;
  flatbuffers::Parser parser(options);
  PSHARD_RETURN_IF_ERROR(detail::parse_schema(&parser, schema_text, what));
  std::string json;
  if (!flatbuffers::GenerateText(parser, size_prefixed_bytes, &json))
    return internal_error("cannot render the " + std::string(what) + " as JSON");
  return json;
}

// The size-prefixed bytes the JSON describes, unverified: callers load them with their
// file type's own checks. Accepts hand-edited JSON (unquoted names too).
inline Result<std::vector<uint8_t>> flatbuffer_from_json(const char* schema_text,
                                                         std::string_view what,
                                                         std::string_view json) {
  flatbuffers::IDLOptions options;
  options.strict_json = false;
  options.size_prefixed = true;
  flatbuffers::Parser parser(options);
  PSHARD_RETURN_IF_ERROR(detail::parse_schema(&parser, schema_text, what));
  const std::string text(json); // Parse() wants a NUL-terminated string
  if (!parser.Parse(text.c_str()))
    return invalid_format("not a readable pshard " + std::string(what) + " (JSON): " +
                          parser.error_);
  const uint8_t* begin = parser.builder_.GetBufferPointer();
  return std::vector<uint8_t>(begin, begin + parser.builder_.GetSize());
}

} // namespace pshard
