#include "runtime/profile/profile_json.h"

#include "runtime/core/flatbuffer_json.h"
#include "schemas/profile_schema_text.h"

namespace pshard {

Result<std::string> profile_to_json(const Profile& profile) {
  return flatbuffer_to_json(schema_text::profile, "profile", profile.bytes().data());
}

Result<Profile> profile_from_json(std::string_view json) {
  PSHARD_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          flatbuffer_from_json(schema_text::profile, "profile", json));
  return Profile::load_bytes(bytes);
}

} // namespace pshard
