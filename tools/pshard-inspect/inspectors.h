// pshard-inspect's file kinds, chosen by the FlatBuffers file identifier (bytes 4..8 of a
// plain FlatBuffer, 8..12 of a size-prefixed one such as a profile).
// Each kind prints its file as text tables or as JSON. A new artifact kind (the
// compiler's schedule, "*.pshard") adds one entry to inspectors().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard::inspect {

struct Inspector {
  const char* identifier; // "PSHP"
  const char* kind;       // "machine profile"
  const char* extension;  // "pshprof"
  bool size_prefixed;     // written with FinishSizePrefixed (identifier at offset 8)
  // Prints `bytes` (the whole file named `path`) to stdout; returns the exit code.
  int (*print)(std::span<const uint8_t> bytes, const std::string& path, bool json);
  // Prints a JSON form of the file (for kinds with a readable JSON twin); may be null.
  int (*print_from_json)(const std::string& text, const std::string& path, bool json);
  // A top-level JSON key only this kind's JSON twin has ("\"sublayers\""), so that main can
  // tell JSON twins apart; may be null (then the kind is the fallback for JSON).
  const char* json_key;
};

const std::vector<Inspector>& inspectors();

int print_profile(std::span<const uint8_t> bytes, const std::string& path, bool json);
int print_profile_from_json(const std::string& text, const std::string& path, bool json);
// Schedule artifacts (*.pshard), in inspect_schedule.cpp.
int print_schedule(std::span<const uint8_t> bytes, const std::string& path, bool json);
int print_schedule_from_json(const std::string& text, const std::string& path, bool json);

} // namespace pshard::inspect
