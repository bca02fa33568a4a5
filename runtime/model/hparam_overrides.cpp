#include "runtime/model/hparam_overrides.h"

#include <cmath>

namespace pshard {
namespace {

Status positive(const char* flag, double v) {
  if (!(v > 0.0) || !std::isfinite(v))
    return invalid_argument(std::string(flag) + " must be a positive number, got " +
                            std::to_string(v));
  return Status::ok_status();
}

} // namespace

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
