// What pshard-run prints after generating: timings, memory and the hybrid runtime's
// statistics (plans used, bytes streamed, peak VRAM, predicted vs measured time per
// pass), as text or JSON.
#pragma once

#include "tools/pshard-run/run_session.h"

#include <ostream>

namespace pshard {

// The streamed text is already on `out`; this ends its line and prints the
// statistics to `err` (like llama.cpp's timings), keeping stdout pure text.
void write_text_report(std::ostream& out, std::ostream& err, const RunResult& r);
void write_json_report(std::ostream& out, const RunResult& r);

} // namespace pshard
