// What pshard-run prints after generating: timings and memory, as text or JSON.
#pragma once

#include "runtime/generate/generator.h"

#include <cstdint>
#include <ostream>

namespace pshard {

struct RunReport {
  const LlamaModel& model;
  const LlamaSession& session;
  const GenerateResult& result;
  uint64_t seed;
};

// The streamed text is already on `out`; this ends its line and prints the
// statistics to `err` (like llama.cpp's timings), keeping stdout pure text.
void write_text_report(std::ostream& out, std::ostream& err, const RunReport& report);
void write_json_report(std::ostream& out, const RunReport& report);

} // namespace pshard
