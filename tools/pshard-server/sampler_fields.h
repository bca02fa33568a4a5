// llama-server's sampler fields beyond OpenAI's: typical_p, top_n_sigma, xtc_*,
// dynatemp_*, mirostat*, dry_* and samplers (runtime/sampler/sampler.h says what each
// does), read
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
inline constexpr std::array<const char*, 15> kSamplerStageFields = {
    "typical_p",          "top_n_sigma",           "xtc_probability", "xtc_threshold",
    "dynatemp_range",     "dynatemp_exponent",     "mirostat",        "mirostat_tau",
    "mirostat_eta",       "dry_multiplier",        "dry_base",        "dry_allowed_length",
    "dry_penalty_last_n", "dry_sequence_breakers", "samplers"};

// The fields the C API takes as strings, which the caller points the params at when it
// submits; nullopt when absent.
struct SamplerStrings {
  // dry_sequence_breakers: at most 32 non-empty strings; nullopt: the defaults.
  std::optional<std::vector<std::string>> dry_breakers;
  // samplers (an array of llama.cpp's names, or a string of its letters, "edskypmxt"),
  // as the C API's ';'-separated names; nullopt: the default order.
  std::optional<std::string> samplers;
};

// Reads them into `g` and `strings`.
FieldError read_sampler_stages(const nlohmann::json& body, pshard_generate_params& g,
                               SamplerStrings& strings);

// The sampling settings under llama-server's names, as its GET /props shows them in
// default_generation_settings.params (what its web UI starts its settings from).
nlohmann::json sampler_settings_json(const pshard_generate_params& g,
                                     const SamplerStrings& strings);

} // namespace pshard::server
