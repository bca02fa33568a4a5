// pshard-run --prompt-cache FILE (llama-cli's flag): a prompt's decoded state kept in a
// file between runs (pshard_context_state_save_file), so a run whose prompt starts as a
// saved one's (a long system prompt, a document asked about again) decodes only the rest.
// The file holds the prompt but its last token, which generation feeds; with
// --prompt-cache-all, the prompt and the answer, as far as the context decoded them;
// --prompt-cache-ro reads the file and never writes it.
//
//   PSHARD_ASSIGN_OR_RETURN(size_t held, use_prompt_cache(ctx, prompt, o, std::cerr));
//   gp.held = prompt.data(); gp.n_held = held;   // then generate prompt[held:]
#pragma once

#include "pshard/pshard.h"
#include "runtime/core/status.h"
#include "tools/pshard-run/run_options.h"

#include <ostream>
#include <vector>

namespace pshard {

// Loads o.prompt_cache when it exists (another model's or context's file is an error
// naming it), keeps the start it shares with `prompt`, decodes the prompt up to its last
// token, and saves that state unless o.prompt_cache_ro. Returns the prompt tokens the
// context then holds, always fewer than the prompt's; a line on `err` says how many
// came from the file.
Result<size_t> use_prompt_cache(pshard_context* ctx, const std::vector<pshard_token>& prompt,
                                const RunOptions& o, std::ostream& err);

// --prompt-cache-all, after generation: saves the state of what the context holds — the
// prompt, then the generated tokens it decoded (all but the last, which no pass fed).
Status save_prompt_cache_all(pshard_context* ctx, const std::vector<pshard_token>& prompt,
                             const std::vector<pshard_token>& generated, const RunOptions& o);

} // namespace pshard
