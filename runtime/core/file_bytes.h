// Small helpers shared by the readers of pshard's binary files (profiles, schedules):
// reading a whole file without exceptions, and wording what a header holds.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

// Reads all of a regular file. Files over `max_bytes` are refused as not being a
// `what` (e.g. "schedule artifact") before anything is allocated.
Status read_whole_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                       std::vector<uint8_t>* out);

// A text file (a prompt, a routing profile) whole: a clear error for a missing file, a
// directory or a device, naming `what` ("prompt file") and the path.
Result<std::string> read_text_file(const std::string& path, const std::string& what);

// A file identifier as text for messages: printable bytes as they are, others as \xNN.
std::string printable_identifier(std::span<const uint8_t> id);

// "major.minor"
std::string version_string(uint32_t major, uint32_t minor);

} // namespace pshard
