// Text views of a schedule artifact shared by pshard-compile (its summary), pshard-inspect
// (tables) and pshard-diff (what changed between two artifacts).
//
//   print_summary(schedule, std::cout);            // budget × tier table
//   DiffResult d = diff_schedules(old_s, new_s, {.tolerance = 0.02}, std::cout);
//   return d.failed(strict) ? 1 : 0;
#pragma once

#include "runtime/schedule/schedule_file.h"

#include <ostream>
#include <string>
#include <vector>

namespace pshard {

std::string format_bytes(uint64_t bytes); // "1.50 GiB", "512 MiB", "300 KiB", "12 B"
// One letter per sub-layer: R resident, S streamed, C cpu ("CRCRS…").
std::string placement_letters(const SchedulePlan& plan);

// The letter (A, B, …) of each plan's resident set within budget `budget`, in
// (context, tier) order: plans with one letter hold the same sub-layers resident.
std::vector<std::string> resident_set_names(const Schedule& schedule, size_t budget);
// budget × context × tier: strategy, resident/streamed/CPU counts, ms per pass, tokens/s,
// VRAM, the resident set's letter and what switching to it from the decode plan copies.
void print_summary(const Schedule& schedule, std::ostream& out);
// Everything pshard-inspect shows: model, machine, options, sub-layers, summary, and each
// plan's placements, streaming and layout totals.
void print_schedule_tables(const Schedule& schedule, std::ostream& out);
// A VLM's vision phase (schema 1.4): its sub-layers and one line per (budget, image-size
// tier); prints nothing for a schedule without one. Part of print_schedule_tables.
void print_vision_tables(const Schedule& schedule, std::ostream& out);

struct DiffOptions {
  double tolerance = 0.02; // relative slowdown of a predicted time that counts as a regression
};

struct DiffResult {
  bool incompatible = false;  // other sub-layers, budgets or tiers: plans cannot be paired
  int regressions = 0;        // plans predicted slower than old × (1 + tolerance)
  int improvements = 0;
  int placement_changes = 0;  // plans whose placements differ
  int switch_changes = 0;     // budgets whose recorded switches differ
  bool failed(bool strict) const {
    return incompatible || regressions > 0 ||
           (strict && (placement_changes > 0 || switch_changes > 0));
  }
};

// Pairs plans by (budget, context, tier) and prints, per pair, placement changes and time
// deltas, and per budget any change in the switches' bytes.
DiffResult diff_schedules(const Schedule& old_schedule, const Schedule& new_schedule,
                          const DiffOptions& options, std::ostream& out);
// The vision plans' part of diff_schedules: paired by (budget, image-size tier), counted
// into `result` as the language plans are; a vision phase in only one artifact, or over
// other sub-layers or tiers, is incompatible.
void diff_vision_plans(const Schedule& old_schedule, const Schedule& new_schedule,
                       const DiffOptions& options, std::ostream& out, DiffResult& result);

} // namespace pshard
