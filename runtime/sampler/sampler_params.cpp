// validate_sampler_params (runtime/sampler/sampler.h): each field against its range, and
// the stage order.
#include "runtime/sampler/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace pshard {

namespace {

// The checks of llama.cpp's other samplers (typical, top-n-sigma, XTC, dynamic
// temperature, Mirostat, DRY).
Status validate_extra_samplers(const SamplerParams& p) {
  auto in_unit = [](float v) { return v >= 0.0f && v <= 1.0f; };
  auto finite_at_least = [](float v, float low) { return std::isfinite(v) && v >= low; };
  if (!(p.typical_p > 0.0f && p.typical_p <= 1.0f))
    return invalid_argument("sampler typical_p must be in (0, 1] (1 = off), got " +
                            std::to_string(p.typical_p));
  if (!std::isfinite(p.top_n_sigma))
    return invalid_argument("sampler top_n_sigma must be finite (<= 0 = off)");
  if (!in_unit(p.xtc_probability) || !in_unit(p.xtc_threshold))
    return invalid_argument("sampler xtc_probability and xtc_threshold must be in [0, 1], got " +
                            std::to_string(p.xtc_probability) + " and " +
                            std::to_string(p.xtc_threshold));
  if (!finite_at_least(p.dynatemp_range, 0.0f))
    return invalid_argument("sampler dynatemp_range must be finite and >= 0 (0 = off), got " +
                            std::to_string(p.dynatemp_range));
  if (!(std::isfinite(p.dynatemp_exponent) && p.dynatemp_exponent > 0.0f))
    return invalid_argument("sampler dynatemp_exponent must be finite and > 0, got " +
                            std::to_string(p.dynatemp_exponent));
  if (p.mirostat < 0 || p.mirostat > 2)
    return invalid_argument("sampler mirostat must be 0 (off), 1 or 2 (the version), got " +
                            std::to_string(p.mirostat));
  if (!finite_at_least(p.mirostat_params.tau, 0.0f) ||
      !finite_at_least(p.mirostat_params.eta, 0.0f))
    return invalid_argument("sampler mirostat_tau and mirostat_eta must be finite and >= 0");
  if (!finite_at_least(p.dry.multiplier, 0.0f))
    return invalid_argument("sampler dry_multiplier must be finite and >= 0 (0 = off), got " +
                            std::to_string(p.dry.multiplier));
  if (!finite_at_least(p.dry.base, 1.0f))
    return invalid_argument("sampler dry_base must be finite and >= 1, got " +
                            std::to_string(p.dry.base));
  if (p.dry.allowed_length < 1)
    return invalid_argument("sampler dry_allowed_length must be >= 1, got " +
                            std::to_string(p.dry.allowed_length));
  if (p.dry.penalty_last_n < -1)
    return invalid_argument("sampler dry_penalty_last_n must be >= -1 (0 = off, -1 = all), got " +
                            std::to_string(p.dry.penalty_last_n));
  return Status::ok_status();
}

} // namespace

Status validate_sampler_params(const SamplerParams& p) {
  if (!std::isfinite(p.temperature))
    return invalid_argument("sampler temperature must be finite, got " +
                            std::to_string(p.temperature));
  if (p.top_k < 0)
    return invalid_argument("sampler top_k must be >= 0 (0 = off), got " + std::to_string(p.top_k));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    return invalid_argument("sampler top_p must be in (0, 1] (1 = off), got " +
                            std::to_string(p.top_p));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    return invalid_argument("sampler min_p must be in [0, 1] (0 = off), got " +
                            std::to_string(p.min_p));
  if (!(std::isfinite(p.repeat_penalty) && p.repeat_penalty > 0.0f))
    return invalid_argument("sampler repeat_penalty must be finite and > 0 (1 = off), got " +
                            std::to_string(p.repeat_penalty));
  if (p.repeat_last_n < -1)
    return invalid_argument("sampler repeat_last_n must be >= -1 (0 = off, -1 = all), got " +
                            std::to_string(p.repeat_last_n));
  if (!std::isfinite(p.frequency_penalty))
    return invalid_argument("sampler frequency_penalty must be finite (0 = off)");
  if (!std::isfinite(p.presence_penalty))
    return invalid_argument("sampler presence_penalty must be finite (0 = off)");
  for (const LogitBias& b : p.logit_bias)
    if (b.token < 0 || std::isnan(b.bias) || b.bias == std::numeric_limits<float>::infinity())
      return invalid_argument("sampler logit_bias: token " + std::to_string(b.token) + " bias " +
                              std::to_string(b.bias) +
                              ": tokens must be >= 0 and biases finite or -inf (a ban)");
  for (size_t i = 0; i < p.order.size(); ++i)
    if (std::find(p.order.begin(), p.order.begin() + static_cast<std::ptrdiff_t>(i), p.order[i]) !=
        p.order.begin() + static_cast<std::ptrdiff_t>(i))
      return invalid_argument("sampler order names " + std::string(sampler_stage_name(p.order[i])) +
                              " twice; name each stage once");
  return validate_extra_samplers(p);
}

} // namespace pshard
