// Status and Result<T>: how every pshard library reports failure.
//
// The libraries never throw across their API, never abort and never exit on bad
// input; they return a Status that says what is wrong and, where it can, what
// would fix it.
//
//   Result<GgufFile> file = GgufFile::open(path);
//   if (!file.ok()) { std::cerr << file.status().to_string() << "\n"; return 1; }
//
//   Status load() {
//     PSHARD_ASSIGN_OR_RETURN(auto file, GgufFile::open(path));
//     PSHARD_RETURN_IF_ERROR(check(file));
//     return Status::ok_status();
//   }
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace pshard {

// Codes grouped by kind: caller errors, bad input data, environment, internal.
enum class StatusCode : int {
  kOk = 0,
  // The caller asked for something invalid.
  kInvalidArgument = 1,
  kOutOfRange = 2,
  kNotFound = 3,
  // The input data is malformed or does not fit.
  kInvalidFormat = 10,   // a file's bytes are malformed or truncated
  kUnsupported = 11,     // well-formed but not something pshard can run
  kVersionMismatch = 12, // a schema version this build does not read
  kModelMismatch = 13,   // an artifact built for another model or machine
  // The environment failed.
  kIoError = 20,
  kOutOfMemory = 21,     // host or device memory, or a budget too small
  kDeviceError = 22,     // CUDA / cuBLASLt / driver
  kUnavailable = 23,     // busy for now (a full queue): the same call may succeed later
  // A bug in pshard.
  kInternal = 30,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid format: <message>"
  std::string to_string() const;

  // Prefixes context ("while loading model.gguf: ...") to a failure; no-op on success.
  Status with_context(const std::string& context) const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string msg) {
  return Status(StatusCode::kInvalidArgument, std::move(msg));
}
inline Status invalid_format(std::string msg) {
  return Status(StatusCode::kInvalidFormat, std::move(msg));
}
inline Status unsupported(std::string msg) {
  return Status(StatusCode::kUnsupported, std::move(msg));
}
inline Status not_found(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
inline Status io_error(std::string msg) { return Status(StatusCode::kIoError, std::move(msg)); }
inline Status out_of_range(std::string msg) {
  return Status(StatusCode::kOutOfRange, std::move(msg));
}
inline Status internal_error(std::string msg) {
  return Status(StatusCode::kInternal, std::move(msg));
}

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : data_(std::move(value)) {}
  Result(Status status) : data_(std::move(status)) {
    assert(!std::get<Status>(data_).ok() && "a Result must not hold an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

private:
  std::variant<T, Status> data_;
};

} // namespace pshard

#define PSHARD_CONCAT_INNER(a, b) a##b
#define PSHARD_CONCAT(a, b) PSHARD_CONCAT_INNER(a, b)

#define PSHARD_RETURN_IF_ERROR(expr)                                                               \
  do {                                                                                             \
    ::pshard::Status pshard_status_ = (expr);                                                      \
    if (!pshard_status_.ok())                                                                      \
      return pshard_status_;                                                                       \
  } while (0)

#define PSHARD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                                               \
  auto tmp = (expr);                                                                               \
  if (!tmp.ok())                                                                                   \
    return tmp.status();                                                                           \
  lhs = std::move(tmp).value()

// PSHARD_ASSIGN_OR_RETURN(auto x, make_x()); declares x or returns the failure.
#define PSHARD_ASSIGN_OR_RETURN(lhs, expr)                                                         \
  PSHARD_ASSIGN_OR_RETURN_IMPL(PSHARD_CONCAT(pshard_result_, __LINE__), lhs, expr)
