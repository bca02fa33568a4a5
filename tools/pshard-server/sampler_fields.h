// llama-server's sampler fields beyond OpenAI's: typical_p, top_n_sigma, xtc_*,
// dynatemp_*, mirostat*, dry_* (runtime/sampler/sampler.h says what each does), read
// from a completion or chat request into the C API's params. A value out of range is a
// 400 naming the field.
#pragma once

#include "pshard/pshard.h"
#include "tools/pshard-server/api_error.h"

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pshard::server {

// Their names, for the APIs translated into a chat request (Responses, Anthropic), which
// pass them through.
inline constexpr std::array<const char*, 14> kSamplerStageFields = {
    "typical_p",          "top_n_sigma",          "xtc_probability", "xtc_threshold",
    "dynatemp_range",     "dynatemp_exponent",    "mirostat",        "mirostat_tau",
    "mirostat_eta",       "dry_multiplier",       "dry_base",        "dry_allowed_length",
    "dry_penalty_last_n", "dry_sequence_breakers"};

// Reads them into `g`; `dry_breakers` gets dry_sequence_breakers (nullopt when absent: the
// defaults; at most 32 non-empty strings), which the caller points g at when it submits.
FieldError read_sampler_stages(const nlohmann::json& body, pshard_generate_params& g,
                               std::optional<std::vector<std::string>>& dry_breakers);

} // namespace pshard::server
