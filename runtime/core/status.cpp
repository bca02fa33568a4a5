#include "runtime/core/status.h"

namespace pshard {

const char* status_code_name(StatusCode code) {
  switch (code) {
  case StatusCode::kOk: return "ok";
  case StatusCode::kInvalidArgument: return "invalid argument";
  case StatusCode::kOutOfRange: return "out of range";
  case StatusCode::kNotFound: return "not found";
  case StatusCode::kInvalidFormat: return "invalid format";
  case StatusCode::kUnsupported: return "unsupported";
  case StatusCode::kVersionMismatch: return "version mismatch";
  case StatusCode::kModelMismatch: return "model mismatch";
  case StatusCode::kIoError: return "I/O error";
  case StatusCode::kOutOfMemory: return "out of memory";
  case StatusCode::kDeviceError: return "device error";
  case StatusCode::kUnavailable: return "unavailable";
  case StatusCode::kInternal: return "internal error";
  }
  return "unknown status";
}

std::string Status::to_string() const {
  if (ok())
    return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (ok())
    return *this;
  return Status(code_, context + ": " + message_);
}

} // namespace pshard
