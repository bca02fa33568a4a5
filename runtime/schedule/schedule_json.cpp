#include "runtime/schedule/schedule_json.h"

#include "runtime/core/file_bytes.h"
#include "runtime/core/flatbuffer_json.h"
#include "schemas/schedule_schema_text.h"

#include <cctype>

namespace pshard {

Result<std::string> schedule_to_json(const Schedule& schedule) {
  return flatbuffer_to_json(schema_text::schedule, "schedule", schedule.bytes().data());
}

Result<Schedule> schedule_from_json(std::string_view json) {
  PSHARD_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          flatbuffer_from_json(schema_text::schedule, "schedule", json));
  return Schedule::load_bytes(bytes);
}

Result<Schedule> load_schedule_any(const std::string& path) {
  // A JSON twin is several times its artifact; 1 GiB is far beyond either.
  std::vector<uint8_t> raw;
  if (Status read = read_whole_file(path, 1ull << 30, "schedule artifact", &raw); !read.ok())
    return read.with_context("while loading '" + path + "'");
  const std::string bytes(raw.begin(), raw.end());
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
