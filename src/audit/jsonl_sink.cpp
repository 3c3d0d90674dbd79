#include "audit/jsonl_sink.h"

#include <cerrno>
#include <cstring>
#include <exception>

#include "audit/alert_json.h"

namespace ts {

JsonlSink::JsonlSink(std::string path) : path_(std::move(path)), owns_(true) {
  (void)ensure_open();
}

JsonlSink::JsonlSink(std::FILE* out) : path_("<FILE>"), out_(out), owns_(false) {}

JsonlSink::~JsonlSink() { (void)close(); }

Status JsonlSink::ensure_open() {
  if (out_) return Status::ok();
  if (closed_ || !owns_) return Status(StatusCode::kIoError, "jsonl " + path_ + ": closed");
  out_ = std::fopen(path_.c_str(), "a");
  if (!out_) return Status(StatusCode::kIoError, "jsonl: opening " + path_ + ": " + std::strerror(errno));
  return Status::ok();
}

Status JsonlSink::write(const Alert& a, const SymbolTable& symbols) {
  TS_RETURN_IF_ERROR(ensure_open());
  std::string line;
  try {
    line = alert_to_json(a, symbols).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, "jsonl " + path_ + ": encoding alert: " + e.what());
  }
  line += '\n';
  if (std::fwrite(line.data(), 1, line.size(), out_) != line.size()) {
    const int err = errno;
    std::clearerr(out_);
    return Status(StatusCode::kIoError, "jsonl " + path_ + ": write failed: " + std::strerror(err));
  }
  return Status::ok();
}

Status JsonlSink::flush() {
  if (!out_) return closed_ ? Status::ok() : ensure_open();
  if (std::fflush(out_) != 0 || std::ferror(out_)) {
    const int err = errno;
    std::clearerr(out_);
    return Status(StatusCode::kIoError, "jsonl " + path_ + ": flush failed: " + std::strerror(err));
  }
  return Status::ok();
}

Status JsonlSink::close() {
  if (closed_) return Status::ok();
  closed_ = true;
  if (!out_) return Status::ok();
  Status s = Status::ok();
  if (owns_) {
    if (std::fclose(out_) != 0) s = Status(StatusCode::kIoError, "jsonl " + path_ + ": close failed: " + std::strerror(errno));
  } else if (std::fflush(out_) != 0) {
    s = Status(StatusCode::kIoError, "jsonl " + path_ + ": flush failed: " + std::strerror(errno));
  }
  out_ = nullptr;
  return s;
}

}  // namespace ts
