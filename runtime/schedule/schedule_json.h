// The readable form of a schedule artifact: JSON as `flatc --json --strict-json
// --defaults-json` writes it (keys in schema order, so diffs are stable), produced and
// parsed in-process with schemas/schedule.fbs embedded, so no flatc is needed.
// Committed goldens are this JSON; schedule_from_json loads one with every check a
// binary file gets.
//
//   PSHARD_ASSIGN_OR_RETURN(std::string json, schedule_to_json(schedule));
//   PSHARD_ASSIGN_OR_RETURN(Schedule again, schedule_from_json(json));
#pragma once

#include "runtime/core/status.h"
#include "runtime/schedule/schedule_file.h"

#include <string>
#include <string_view>

namespace pshard {

Result<std::string> schedule_to_json(const Schedule& schedule);
Result<Schedule> schedule_from_json(std::string_view json);

// A .pshard file or its JSON form (told apart by the first non-space byte).
Result<Schedule> load_schedule_any(const std::string& path);

} // namespace pshard
