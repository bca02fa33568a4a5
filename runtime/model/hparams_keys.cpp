#include "runtime/model/hparams_keys.h"

#include <limits>

namespace pshard {

Status HParamKeys::optional(const std::string& suffix, int64_t* out) const {
  const std::string k = key(suffix);
  if (!file_.find(k))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(uint64_t v, file_.get_uint(k));
  if (v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    return invalid_format("metadata key '" + k + "' is " + std::to_string(v) +
                          ", far larger than any model has");
  *out = static_cast<int64_t>(v);
  return Status::ok_status();
}

Status HParamKeys::optional(const std::string& suffix, float* out) const {
  const std::string k = key(suffix);
  if (!file_.find(k))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(double v, file_.get_float(k));
  *out = static_cast<float>(v);
  return Status::ok_status();
}

Status HParamKeys::optional(const std::string& suffix, bool* out) const {
  const std::string k = key(suffix);
  if (!file_.find(k))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(*out, file_.get_bool(k));
  return Status::ok_status();
}

Status HParamKeys::optional(const std::string& suffix, std::string* out) const {
  const std::string k = key(suffix);
  if (!file_.find(k))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(*out, file_.get_string(k));
  return Status::ok_status();
}

namespace {

template <typename T>
Status read_required(const HParamKeys& k, const std::string& suffix, const std::string& family,
                     T* out) {
  if (!k.has(suffix))
    return invalid_format("metadata key '" + k.key(suffix) + "' is missing; it is required for " +
                          family + " models");
  return k.optional(suffix, out);
}

} // namespace

Status HParamKeys::required(const std::string& suffix, int64_t* out) const {
  return read_required(*this, suffix, std::string(family_.name), out);
}

Status HParamKeys::required(const std::string& suffix, float* out) const {
  return read_required(*this, suffix, std::string(family_.name), out);
}

} // namespace pshard
