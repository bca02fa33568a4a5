#include "runtime/model/hparams_keys.h"

#include <limits>
#include <type_traits>

namespace pshard {

namespace {

// An override of the type the reader asks for (an integer serves as a number too).
template <typename T>
Status take(const std::variant<int64_t, double, std::string>& v, const std::string& key, T* out) {
  if (const T* got = std::get_if<T>(&v)) {
    *out = *got;
    return Status::ok_status();
  }
  if constexpr (std::is_same_v<T, double>)
    if (const int64_t* i = std::get_if<int64_t>(&v)) {
      *out = static_cast<double>(*i);
      return Status::ok_status();
    }
  return invalid_argument("the override of '" + key + "' is not of the type the key holds");
}

} // namespace

Status HParamKeys::optional(const std::string& suffix, int64_t* out) const {
  const std::string k = key(suffix);
  if (const Override* o = overridden(suffix))
    return take(*o, k, out);
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
  if (const Override* o = overridden(suffix)) {
    double v = 0;
    PSHARD_RETURN_IF_ERROR(take(*o, k, &v));
    *out = static_cast<float>(v);
    return Status::ok_status();
  }
  if (!file_.find(k))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(double v, file_.get_float(k));
  *out = static_cast<float>(v);
  return Status::ok_status();
}

Status HParamKeys::optional(const std::string& suffix, bool* out) const {
  const std::string k = key(suffix);
  if (const Override* o = overridden(suffix)) { // --override-kv's bool: 0 or 1
    int64_t v = 0;
    PSHARD_RETURN_IF_ERROR(take(*o, k, &v));
    *out = v != 0;
    return Status::ok_status();
  }
  if (!file_.find(k))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(*out, file_.get_bool(k));
  return Status::ok_status();
}

Status HParamKeys::optional(const std::string& suffix, std::string* out) const {
  const std::string k = key(suffix);
  if (const Override* o = overridden(suffix))
    return take(*o, k, out);
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
