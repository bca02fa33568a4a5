#include "runtime/model/hparam_overrides.h"

#include "runtime/tokenizer/tokenizer_keys.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace pshard {
namespace {

Status positive(const char* flag, double v) {
  if (!(v > 0.0) || !std::isfinite(v))
    return invalid_argument(std::string(flag) + " must be a positive number, got " +
                            std::to_string(v));
  return Status::ok_status();
}

} // namespace

namespace {

// A tokenizer key parsed into by_key moves to file_values, typed as the tokenizer reads it.
Status move_tokenizer_key(HParamOverrides& o, const std::string& key, std::string_view type,
                          const std::string& what) {
  const HParamValue parsed = o.by_key[key];
  o.by_key.erase(key);
  const auto known = std::find_if(std::begin(kTokenizerScalarKeys), std::end(kTokenizerScalarKeys),
                                  [&](const TokenizerKey& k) { return k.key == key; });
  if (known == std::end(kTokenizerScalarKeys)) {
    std::string names;
    for (const TokenizerKey& k : kTokenizerScalarKeys)
      names += (names.empty() ? "" : ", ") + std::string(k.key.substr(15)); // after tokenizer.ggml.
    return invalid_argument(what + ": of the tokenizer's keys, pshard overrides tokenizer.ggml. " +
                            names + " (the vocabulary's arrays and the chat template, which " +
                            "--chat-template replaces, are not overridable)");
  }
  const char* wanted = known->kind == TokenizerKeyKind::kFlag      ? "bool"
                       : known->kind == TokenizerKeyKind::kTokenId ? "int"
                                                                   : "str";
  if (type != wanted)
    return invalid_argument(what + ": " + key + " is read as a " + wanted + "; give " + key + "=" +
                            wanted + ":VALUE");
  if (known->kind == TokenizerKeyKind::kFlag)
    o.file_values[key] = gguf::Value{std::get<int64_t>(parsed) != 0};
  else if (known->kind == TokenizerKeyKind::kTokenId)
    o.file_values[key] = gguf::Value{std::get<int64_t>(parsed)};
  else
    o.file_values[key] = gguf::Value{std::get<std::string>(parsed)};
  return Status::ok_status();
}

} // namespace

Status add_kv_override(HParamOverrides& o, std::string_view spec) {
  const std::string what = "--override-kv " + std::string(spec);
  const size_t eq = spec.find('='), colon = spec.find(':', eq == spec.npos ? 0 : eq);
  if (eq == spec.npos || eq == 0 || colon == spec.npos)
    return invalid_argument(what + ": give KEY=TYPE:VALUE, TYPE int, float, bool or str "
                                   "(e.g. qwen3moe.expert_used_count=int:4)");
  const std::string key(spec.substr(0, eq));
  const std::string_view type = spec.substr(eq + 1, colon - eq - 1);
  const std::string value(spec.substr(colon + 1));
  try {
    size_t used = 0;
    if (type == "int") {
      o.by_key[key] = static_cast<int64_t>(std::stoll(value, &used));
    } else if (type == "float") {
      const double v = std::stod(value, &used);
      if (!std::isfinite(v))
        used = 0;
      o.by_key[key] = v;
    } else if (type == "bool") {
      if (value != "true" && value != "false")
        return invalid_argument(what + ": a bool is true or false");
      o.by_key[key] = static_cast<int64_t>(value == "true");
      used = value.size();
    } else if (type == "str") {
      o.by_key[key] = value;
      used = value.size();
    } else {
      return invalid_argument(what + ": the type is int, float, bool or str, not '" +
                              std::string(type) + "'");
    }
    if (used != value.size() || value.empty())
      throw std::invalid_argument(value);
  } catch (const std::exception&) { // stoll/stod: not a number, or out of range
    o.by_key.erase(key);
    return invalid_argument(what + ": '" + value + "' is not a finite " + std::string(type));
  }
  if (key.starts_with("tokenizer."))
    return move_tokenizer_key(o, key, type, what);
  return Status::ok_status();
}

Status check_overrides_with_schedule(const HParamOverrides& o) {
  for (const auto& [key, value] : o.by_key)
    if (key.find(".rope.") == std::string::npos)
      return invalid_argument(
          "--override-kv " + key +
          " with a schedule: the schedule's plans were made for the file's hyperparameters; "
          "override only rope.* keys (or the tokenizer's), or run without the schedule");
  return Status::ok_status();
}

Status add_kv_overrides(HParamOverrides& o, std::span<const std::string> kv_specs, bool scheduled) {
  for (const std::string& spec : kv_specs)
    PSHARD_RETURN_IF_ERROR(add_kv_override(o, spec));
  return scheduled ? check_overrides_with_schedule(o) : Status::ok_status();
}

Result<HParamOverrides> rope_overrides(const RopeFlags& f) {
  HParamOverrides o;
  auto& v = o.values;
  if (!f.scaling.empty()) {
    if (f.scaling != "none" && f.scaling != "linear" && f.scaling != "yarn")
      return invalid_argument("--rope-scaling takes none, linear or yarn, not '" + f.scaling + "'");
    v["rope.scaling.type"] = f.scaling;
  }
  if (f.scale != 0 && f.freq_scale != 0)
    return invalid_argument("--rope-scale N and --rope-freq-scale 1/N say the same: give one");
  if (f.scale != 0) {
    PSHARD_RETURN_IF_ERROR(positive("--rope-scale", f.scale));
    v["rope.scaling.factor"] = f.scale;
  }
  if (f.freq_scale != 0) {
    PSHARD_RETURN_IF_ERROR(positive("--rope-freq-scale", f.freq_scale));
    v["rope.scaling.factor"] = 1.0 / f.freq_scale;
  }
  if (f.freq_base != 0) {
    PSHARD_RETURN_IF_ERROR(positive("--rope-freq-base", f.freq_base));
    v["rope.freq_base"] = f.freq_base;
  }
  if (f.yarn_orig_ctx != 0) {
    if (f.yarn_orig_ctx < 0)
      return invalid_argument("--yarn-orig-ctx must be positive, got " +
                              std::to_string(f.yarn_orig_ctx));
    v["rope.scaling.original_context_length"] = f.yarn_orig_ctx;
  }
  if (f.yarn_ext_factor >= 0)
    v["rope.scaling.yarn_ext_factor"] = f.yarn_ext_factor;
  if (f.yarn_attn_factor >= 0) {
    PSHARD_RETURN_IF_ERROR(positive("--yarn-attn-factor", f.yarn_attn_factor));
    // Files spell it either way; the reader takes the second after the first.
    v["rope.scaling.attn_factor"] = f.yarn_attn_factor;
    v["rope.scaling.yarn_attn_factor"] = f.yarn_attn_factor;
  }
  if (f.yarn_beta_fast >= 0)
    v["rope.scaling.yarn_beta_fast"] = f.yarn_beta_fast;
  if (f.yarn_beta_slow >= 0)
    v["rope.scaling.yarn_beta_slow"] = f.yarn_beta_slow;
  return o;
}

} // namespace pshard
