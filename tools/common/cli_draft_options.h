// -md/--model-draft and --draft-p-min (llama.cpp's names): speculative decoding from a
// small model of the same vocabulary, spelled and checked the same in pshard-run and
// pshard-server. Header-only and CLI11-dependent: include it from the mains and what
// turns their options into params. `-md` itself is a FlagSpelling of --model-draft.
//
//   cli::add_draft_model_options(app, o.draft_model_path, o.draft_p_min);
//   o.draft_max = cli::draft_max_with(o.draft_model_path, o.draft_max);
#pragma once

#include "runtime/generate/draft_model.h"
#include "runtime/generate/prompt_lookup.h"
#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>
#include <string>

namespace pshard::cli {

// `path` empty: no draft model; `p_min` starts at kDefaultDraftPMin.
inline void add_draft_model_options(CLI::App& app, std::string& path, float& p_min) {
  app.add_option("--model-draft", path,
                 "speculative decoding from a small model of the same vocabulary (-md): its "
                 "most likely next tokens, drafted on the CPU, --draft-max of them (16 unless "
                 "given), are checked in one pass; the tokens are those of decoding without it");
  app.add_option("--draft-p-min", p_min,
                 "with --model-draft: a draft stops at a token the draft model gives less than "
                 "this probability (0: never)")
      ->check(between(0, 1))
      ->capture_default_str();
}

// --draft-max as given, or llama.cpp's default with a draft model when none was.
inline int32_t draft_max_with(const std::string& path, int32_t draft_max) {
  return !path.empty() && draft_max == 0 ? kDefaultDraftMax : draft_max;
}

} // namespace pshard::cli
