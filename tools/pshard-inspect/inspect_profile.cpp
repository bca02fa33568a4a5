// pshard-inspect for machine profiles (*.pshprof, or their JSON form).
#include "runtime/profile/profile.h"
#include "runtime/profile/profile_json.h"
#include "runtime/profile/profile_report.h"
#include "tools/pshard-inspect/inspectors.h"

#include <cstdio>
#include <iostream>

namespace pshard::inspect {
namespace {

int show(const Result<Profile>& profile, const std::string& path, bool json) {
  if (!profile.ok()) {
    std::fprintf(stderr, "pshard-inspect: %s\n",
                 profile.status().with_context("while reading '" + path + "'").to_string().c_str());
    return 1;
  }
  if (!json) {
    std::cout << profile_report(*profile);
    return 0;
  }
  Result<std::string> text = profile_to_json(*profile);
  if (!text.ok()) {
    std::fprintf(stderr, "pshard-inspect: %s\n", text.status().to_string().c_str());
    return 1;
  }
  std::cout << *text;
  return 0;
}

} // namespace

int print_profile(std::span<const uint8_t> bytes, const std::string& path, bool json) {
  return show(Profile::load_bytes(bytes), path, json);
}

int print_profile_from_json(const std::string& text, const std::string& path, bool json) {
  return show(profile_from_json(text), path, json);
}

const std::vector<Inspector>& inspectors() {
  static const std::vector<Inspector> all = {
      {"PSHP", "machine profile", "pshprof", true, print_profile, print_profile_from_json, nullptr},
      {"PSHS", "schedule", "pshard", true, print_schedule, print_schedule_from_json,
       "\"sublayers\""},
  };
  return all;
}

} // namespace pshard::inspect
