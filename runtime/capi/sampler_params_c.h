// The sampler's scalar settings between SamplerParams (runtime/sampler/sampler.h) and the
// C API's pshard_generate_params, field by field in one place: the C API's defaults and
// its reading of a call's params, and pshard-run's flags (which are SamplerParams) as
// params. Header-only, so a tool built on the shared library can use it. Not copied: the
// seed, logit biases and DRY's breakers, which each side keeps in its own form.
#pragma once

#include "pshard/pshard.h"
#include "runtime/sampler/sampler.h"

namespace pshard {

inline void sampler_to_c(const SamplerParams& s, pshard_generate_params& p) {
  p.temperature = s.temperature;
  p.top_k = s.top_k;
  p.top_p = s.top_p;
  p.min_p = s.min_p;
  p.repeat_penalty = s.repeat_penalty;
  p.repeat_last_n = s.repeat_last_n;
  p.frequency_penalty = s.frequency_penalty;
  p.presence_penalty = s.presence_penalty;
  p.typical_p = s.typical_p;
  p.top_n_sigma = s.top_n_sigma;
  p.xtc_probability = s.xtc_probability;
  p.xtc_threshold = s.xtc_threshold;
  p.dynatemp_range = s.dynatemp_range;
  p.dynatemp_exponent = s.dynatemp_exponent;
  p.mirostat = s.mirostat;
  p.mirostat_tau = s.mirostat_params.tau;
  p.mirostat_eta = s.mirostat_params.eta;
  p.dry_multiplier = s.dry.multiplier;
  p.dry_base = s.dry.base;
  p.dry_allowed_length = s.dry.allowed_length;
  p.dry_penalty_last_n = s.dry.penalty_last_n;
}

inline void sampler_from_c(const pshard_generate_params& p, SamplerParams& s) {
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.min_p = p.min_p;
  s.repeat_penalty = p.repeat_penalty;
  s.repeat_last_n = p.repeat_last_n;
  s.frequency_penalty = p.frequency_penalty;
  s.presence_penalty = p.presence_penalty;
  s.typical_p = p.typical_p;
  s.top_n_sigma = p.top_n_sigma;
  s.xtc_probability = p.xtc_probability;
  s.xtc_threshold = p.xtc_threshold;
  s.dynatemp_range = p.dynatemp_range;
  s.dynatemp_exponent = p.dynatemp_exponent;
  s.mirostat = p.mirostat;
  s.mirostat_params = {p.mirostat_tau, p.mirostat_eta};
  s.dry = {p.dry_multiplier, p.dry_base, p.dry_allowed_length, p.dry_penalty_last_n};
}

} // namespace pshard
