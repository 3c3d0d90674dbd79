#pragma once
// Status and Result<T>: error values for the hot path (no exceptions there).
// A Status is cheap when ok (no allocation); an error carries a stable code and a message.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace ts {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kParseError,
  kIoError,
  kOutOfRange,
  kUnsupported,
  kInternal,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "parse_error: message"
  std::string to_string() const;
  // Prefixes context as the error travels up: "loading x: <message>".
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}    // NOLINT: must not be ok
  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& value() const& { return std::get<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<Status>(v_);
  }

 private:
  std::variant<T, Status> v_;
};

#define TS_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::ts::Status ts_status_ = (expr);       \
    if (!ts_status_.is_ok()) return ts_status_; \
  } while (0)

}  // namespace ts
