// pshard-inspect for schedule artifacts (*.pshard, or their JSON form): tables, or the
// JSON twin (keys in schema order, stable for diffs; what goldens are made of).
#include "runtime/schedule/schedule_json.h"
#include "tools/pshard-inspect/inspectors.h"
#include "tools/schedule/schedule_report.h"

#include <cstdio>
#include <iostream>

namespace pshard::inspect {
namespace {

int show(const Result<Schedule>& schedule, const std::string& path, bool json) {
  if (!schedule.ok()) {
    std::fprintf(
        stderr, "pshard-inspect: %s\n",
        schedule.status().with_context("while reading '" + path + "'").to_string().c_str());
    return 1;
  }
  if (!json) {
    print_schedule_tables(*schedule, std::cout);
    return 0;
  }
  Result<std::string> text = schedule_to_json(*schedule);
  if (!text.ok()) {
    std::fprintf(stderr, "pshard-inspect: %s\n", text.status().to_string().c_str());
    return 1;
  }
  std::cout << *text;
  return 0;
}

} // namespace

int print_schedule(std::span<const uint8_t> bytes, const std::string& path, bool json) {
  return show(Schedule::load_bytes(bytes), path, json);
}

int print_schedule_from_json(const std::string& text, const std::string& path, bool json) {
  return show(schedule_from_json(text), path, json);
}

} // namespace pshard::inspect
