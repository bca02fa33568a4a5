#include "runtime/profile/profile_json.h"

#include "schemas/profile_schema_text.h"

#include <flatbuffers/idl.h>

namespace pshard {
namespace {

// A parser that knows the schema. Parsing the schema text takes well under a
// millisecond; a fresh parser per call keeps this thread-safe without locks.
Status make_parser(flatbuffers::Parser* parser) {
  if (!parser->Parse(schema_text::profile))
    return internal_error("the embedded profile schema does not parse: " + parser->error_);
  return Status::ok_status();
}

} // namespace

Result<std::string> profile_to_json(const Profile& profile) {
  flatbuffers::IDLOptions options;
  options.strict_json = true;
  options.output_default_scalars_in_json = true; // every field visible, zeros included
  options.output_enum_identifiers = true;
  options.size_prefixed = true;
  flatbuffers::Parser parser(options);
  PSHARD_RETURN_IF_ERROR(make_parser(&parser));
  std::string json;
  if (!flatbuffers::GenerateText(parser, profile.bytes().data(), &json))
    return internal_error("cannot render the profile as JSON");
  return json;
}

Result<Profile> profile_from_json(std::string_view json) {
  flatbuffers::IDLOptions options;
  options.strict_json = false; // accept hand-edited JSON with unquoted names too
  options.size_prefixed = true;
  flatbuffers::Parser parser(options);
  PSHARD_RETURN_IF_ERROR(make_parser(&parser));
  const std::string text(json); // Parse() wants a NUL-terminated string
  if (!parser.Parse(text.c_str()))
    return invalid_format("not a readable pshard profile (JSON): " + parser.error_);
  return Profile::load_bytes(
      std::span<const uint8_t>(parser.builder_.GetBufferPointer(), parser.builder_.GetSize()));
}

} // namespace pshard
