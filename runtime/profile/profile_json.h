// The readable form of a profile: JSON as `flatc --json --strict-json --defaults-json`
// writes it, produced and parsed in-process with the schema compiled into the library
// (schemas/profile.fbs embedded as text), so no flatc or .fbs file is needed at run time.
//
//   PSHARD_ASSIGN_OR_RETURN(std::string json, profile_to_json(profile));
//   PSHARD_ASSIGN_OR_RETURN(Profile again, profile_from_json(json));  // verified like a file
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/profile.h"

#include <string>
#include <string_view>

namespace pshard {

Result<std::string> profile_to_json(const Profile& profile);

// Parses JSON (fields as in schemas/profile.fbs) and loads the result with the same
// checks as a binary file, version included.
Result<Profile> profile_from_json(std::string_view json);

} // namespace pshard
