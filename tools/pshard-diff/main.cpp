// pshard-diff: what changed between two schedule artifacts — placements per (budget,
// tier) and predicted time deltas. CI runs it against committed goldens:
//
//   pshard-diff golden.json new.pshard                 # exit 1 on a >2% predicted slowdown
//   pshard-diff old.pshard new.pshard --tolerance 0.05 --strict
//
// Either side may be a .pshard file or its JSON form (pshard-inspect --json).
// Exit status: 0 no regression; 1 a regression past --tolerance, incompatible grids, or
// (with --strict) any placement change; 2 a file that does not load.
#include "runtime/schedule/schedule_json.h"
#include "tools/schedule/schedule_report.h"

#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace cli = pshard::cli;

int main(int argc, char** argv) {
  std::string old_path, new_path;
  pshard::DiffOptions options;
  bool strict = false;
  CLI::App app{"pshard-diff: compare two schedule artifacts (placements, predicted times)"};
  app.add_option("old", old_path, "the reference artifact (*.pshard or its JSON)")->required();
  app.add_option("new", new_path, "the artifact to check")->required();
  app.add_option("--tolerance", options.tolerance,
                 "relative predicted slowdown that fails (0.02 = 2%)")->capture_default_str()
      ->check(cli::at_least(0));
  app.add_flag("--strict", strict, "also fail when any placement changes");
  CLI11_PARSE(app, argc, argv);

  auto a = pshard::load_schedule_any(old_path);
  if (!a.ok()) {
    std::cerr << "pshard-diff: " << a.status().to_string() << "\n";
    return 2;
  }
  auto b = pshard::load_schedule_any(new_path);
  if (!b.ok()) {
    std::cerr << "pshard-diff: " << b.status().to_string() << "\n";
    return 2;
  }
  const pshard::DiffResult r = pshard::diff_schedules(*a, *b, options, std::cout);
  return r.failed(strict) ? 1 : 0;
}
