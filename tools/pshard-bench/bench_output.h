// pshard-bench's outputs: a markdown table like llama-bench's (plus the ISA path,
// GFLOP/s for pp rows and the share of the measured memory bandwidth for tg rows),
// CSV, or a JSON array of rows with llama-bench's field names.
#pragma once

#include "tools/pshard-bench/bench_types.h"

#include <ostream>

namespace pshard::bench {

struct MachineInfo {
  std::string cpu_info;
  std::vector<std::pair<int, double>> bandwidth; // (threads, bytes/s)
};

void print_markdown(std::ostream& out, const std::vector<BenchRow>& rows, const MachineInfo& m);
void print_csv(std::ostream& out, const std::vector<BenchRow>& rows, const MachineInfo& m);
void print_json(std::ostream& out, const std::vector<BenchRow>& rows, const MachineInfo& m);

// The CPU's model name (from /proc/cpuinfo on Linux), or "unknown".
std::string cpu_model_name();

} // namespace pshard::bench
