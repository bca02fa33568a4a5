// What pshard-run prints after generating: timings, memory and the hybrid runtime's
// statistics (plans used, bytes streamed, peak VRAM, predicted vs measured time per
// pass), as text or JSON.
#pragma once

#include "tools/common/json_writer.h"
#include "tools/pshard-run/run_session.h"

#include <ostream>

namespace pshard {

// The streamed text is already on `out`; this ends its line and prints the
// statistics to `err` (like llama.cpp's timings), keeping stdout pure text.
void write_text_report(std::ostream& out, std::ostream& err, const RunResult& r);
void write_json_report(std::ostream& out, const RunResult& r);
// The report's first keys: prompt_tokens, generated_tokens, text and (when recorded)
// top_logprobs, inside an object the caller opened.
void write_generation_json(JsonWriter& j, const std::vector<pshard_token>& prompt,
                           const std::vector<pshard_token>& generated, const std::string& text,
                           const std::vector<std::vector<std::pair<pshard_token, float>>>& top);

} // namespace pshard
