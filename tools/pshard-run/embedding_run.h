// pshard-run --embedding: the prompt's embedding instead of generated text (llama.cpp's
// llama-embedding): pooled by --pooling (default: the model's pooling_type), normalized
// unless --embd-normalize -1, cut by --dimensions; printed one vector per line (every
// token's row with --pooling none), or as JSON with --json. The prompt holds one text a
// line (--embd-separator, as llama-embedding): several give a blank line between their
// vectors, or a JSON array.
#pragma once

#include "runtime/core/status.h"
#include "tools/pshard-run/run_options.h"

#include <ostream>
#include <string>

namespace pshard {

Status run_embedding(const RunOptions& o, const std::string& prompt_text, std::ostream& out);

} // namespace pshard
