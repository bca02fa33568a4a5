#include "runtime/schedule/schedule_json.h"

#include "schemas/schedule_schema_text.h"

#include <flatbuffers/idl.h>

#include <cctype>
#include <fstream>
#include <iterator>

namespace pshard {
namespace {

// A fresh parser per call keeps this thread-safe; parsing the schema takes well under
// a millisecond.
Status make_parser(flatbuffers::Parser* parser) {
  if (!parser->Parse(schema_text::schedule))
    return internal_error("the embedded schedule schema does not parse: " + parser->error_);
  return Status::ok_status();
}

} // namespace

Result<std::string> schedule_to_json(const Schedule& schedule) {
  flatbuffers::IDLOptions options;
  options.strict_json = true;
  options.output_default_scalars_in_json = true; // every field visible, zeros included
  options.output_enum_identifiers = true;
  options.size_prefixed = true;
  flatbuffers::Parser parser(options);
  PSHARD_RETURN_IF_ERROR(make_parser(&parser));
  std::string json;
  if (!flatbuffers::GenerateText(parser, schedule.bytes().data(), &json))
    return internal_error("cannot render the schedule as JSON");
  return json;
}

Result<Schedule> schedule_from_json(std::string_view json) {
  flatbuffers::IDLOptions options;
  options.strict_json = false;
  options.size_prefixed = true;
  flatbuffers::Parser parser(options);
  PSHARD_RETURN_IF_ERROR(make_parser(&parser));
  const std::string text(json); // Parse() wants a NUL-terminated string
  if (!parser.Parse(text.c_str()))
    return invalid_format("not a readable pshard schedule (JSON): " + parser.error_);
  return Schedule::load_bytes(
      std::span<const uint8_t>(parser.builder_.GetBufferPointer(), parser.builder_.GetSize()));
}

Result<Schedule> load_schedule_any(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return io_error("cannot open '" + path + "'");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t first = 0;
  while (first < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[first])))
    ++first;
  Result<Schedule> s =
      first < bytes.size() && bytes[first] == '{'
          ? schedule_from_json(bytes)
          : Schedule::load_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  if (!s.ok())
    return s.status().with_context("while loading '" + path + "'");
  return s;
}

} // namespace pshard
