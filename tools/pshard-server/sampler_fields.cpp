#include "tools/pshard-server/sampler_fields.h"

#include "runtime/sampler/dry_penalty.h"
#include "runtime/sampler/sampler_order.h"

#include <algorithm>
#include <tuple>

namespace pshard::server {

using nlohmann::json;

namespace {

// A float field within [lo, hi], left as it is when absent.
FieldError read_float(const json& body, const char* key, float& out, double lo, double hi) {
  double v = out;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, key, v, lo, hi));
  out = static_cast<float>(v);
  return std::nullopt;
}

FieldError read_int(const json& body, const char* key, int32_t& out, int64_t lo, int64_t hi) {
  int64_t v = out;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, key, v, lo, hi));
  out = static_cast<int32_t>(v);
  return std::nullopt;
}

// `samplers` as llama-server takes it: an array of names or a string of letters.
FieldError read_sampler_order(const json& body, std::optional<std::string>& out) {
  auto it = body.find("samplers");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  const bool names =
      it->is_array() && it->size() <= 32 &&
      std::all_of(it->begin(), it->end(), [](const json& n) { return n.is_string(); });
  if (!names && !it->is_string())
    return bad_request("'samplers' must be an array of sampler names (\"top_k\", \"min_p\", "
                       "\"temperature\", ...) or a string of their letters (\"kmt\")",
                       "samplers", "invalid_type");
  const Result<SamplerOrder> order = names
                                         ? parse_sampler_names(it->get<std::vector<std::string>>())
                                         : parse_sampler_letters(it->get<std::string>());
  if (!order.ok())
    return bad_request("'samplers': " + order.status().message(), "samplers", "invalid_value");
  out = sampler_order_names(*order);
  return std::nullopt;
}

} // namespace

FieldError read_sampler_stages(const json& body, pshard_generate_params& g,
                               SamplerStrings& strings) {
  constexpr double kLarge = 1e9;
  if (auto e = read_float(body, "typical_p", g.typical_p, 0, 1))
    return e;
  if (g.typical_p == 0) // llama-server's 0 would keep one token; pshard's range is (0, 1]
    return bad_request("'typical_p' must be in (0, 1] (1: off)", "typical_p", "invalid_value");
  for (auto [key, field, lo, hi] : {std::tuple{"top_n_sigma", &g.top_n_sigma, -kLarge, kLarge},
                                    {"xtc_probability", &g.xtc_probability, 0.0, 1.0},
                                    {"xtc_threshold", &g.xtc_threshold, 0.0, 1.0},
                                    {"dynatemp_range", &g.dynatemp_range, 0.0, kLarge},
                                    {"dynatemp_exponent", &g.dynatemp_exponent, 1e-6, kLarge},
                                    {"mirostat_tau", &g.mirostat_tau, 0.0, kLarge},
                                    {"mirostat_eta", &g.mirostat_eta, 0.0, kLarge},
                                    {"dry_multiplier", &g.dry_multiplier, 0.0, kLarge},
                                    {"dry_base", &g.dry_base, 1.0, kLarge}})
    if (auto e = read_float(body, key, *field, lo, hi))
      return e;
  if (auto e = read_int(body, "mirostat", g.mirostat, 0, 2))
    return e;
  if (auto e = read_int(body, "dry_allowed_length", g.dry_allowed_length, 1, 1 << 20))
    return e;
  if (auto e = read_int(body, "dry_penalty_last_n", g.dry_penalty_last_n, -1, 1 << 30))
    return e;
  if (auto it = body.find("dry_sequence_breakers"); it != body.end() && !it->is_null()) {
    std::vector<std::string> breakers;
    if (!it->is_array() || it->size() > 32)
      return bad_request("'dry_sequence_breakers' must be an array of at most 32 strings",
                         "dry_sequence_breakers", "invalid_type");
    for (const json& b : *it) {
      if (!b.is_string() || b.get<std::string>().empty())
        return bad_request("'dry_sequence_breakers' must hold non-empty strings, got " + b.dump(),
                           "dry_sequence_breakers", "invalid_value");
      breakers.push_back(b.get<std::string>());
    }
    strings.dry_breakers = std::move(breakers);
  }
  return read_sampler_order(body, strings.samplers);
}

json sampler_settings_json(const pshard_generate_params& g, const SamplerStrings& strings) {
  // `samplers` was read into names pshard takes (read_sampler_order, the --samplers flag).
  const Result<SamplerOrder> order =
      strings.samplers ? parse_sampler_names(*strings.samplers) : default_sampler_order();
  json samplers = json::array();
  for (SamplerStage stage : order.ok() ? *order : default_sampler_order())
    samplers.push_back(sampler_stage_name(stage));
  return {{"temperature", g.temperature},
          {"top_k", g.top_k},
          {"top_p", g.top_p},
          {"min_p", g.min_p},
          {"typical_p", g.typical_p},
          {"top_n_sigma", g.top_n_sigma},
          {"xtc_probability", g.xtc_probability},
          {"xtc_threshold", g.xtc_threshold},
          {"dynatemp_range", g.dynatemp_range},
          {"dynatemp_exponent", g.dynatemp_exponent},
          {"repeat_penalty", g.repeat_penalty},
          {"repeat_last_n", g.repeat_last_n},
          {"frequency_penalty", g.frequency_penalty},
          {"presence_penalty", g.presence_penalty},
          {"mirostat", g.mirostat},
          {"mirostat_tau", g.mirostat_tau},
          {"mirostat_eta", g.mirostat_eta},
          {"dry_multiplier", g.dry_multiplier},
          {"dry_base", g.dry_base},
          {"dry_allowed_length", g.dry_allowed_length},
          {"dry_penalty_last_n", g.dry_penalty_last_n},
          {"dry_sequence_breakers",
           strings.dry_breakers ? *strings.dry_breakers : default_dry_sequence_breakers()},
          {"samplers", samplers}};
}

} // namespace pshard::server
