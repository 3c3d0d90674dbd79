#include "audit/jsonl_sink.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>

#include "audit/alert_json.h"
#include "core/log.h"

namespace ts {

namespace {

// The "id" of one line as the sink writes it ({"id":123,...} in any key order). nlohmann writes
// no spaces and escapes quotes inside strings, so `"id":` only matches the key.
bool line_id(std::string_view line, uint64_t* id) {
  const size_t at = line.find("\"id\":");
  if (at == std::string_view::npos) return false;
  const size_t start = at + 5;
  if (start >= line.size() || line[start] < '0' || line[start] > '9') return false;
  uint64_t v = 0;
  for (size_t i = start; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) v = v * 10 + uint64_t(line[i] - '0');
  *id = v;
  return true;
}

std::string io_error(const std::string& what, const std::string& path) {
  return "jsonl: " + what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

Result<JsonlContents> jsonl_read_contents(const std::string& path) {
  JsonlContents c;
  // Only a regular file holds a previous run: /dev/stdout, a FIFO or a terminal is written to
  // as it is (reading one would block or consume someone else's data).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return c;
    return Status(StatusCode::kIoError, io_error("stat", path));
  }
  if (!S_ISREG(st.st_mode)) return c;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    if (errno == ENOENT) return c;
    return Status(StatusCode::kIoError, io_error("reading", path));
  }
  std::string line;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    std::string_view chunk(buf, n);
    size_t from = 0;
    for (size_t nl = chunk.find('\n'); nl != std::string_view::npos; nl = chunk.find('\n', from)) {
      line.append(chunk.substr(from, nl - from));
      uint64_t id = 0;
      if (line_id(line, &id)) {
        ++c.alerts;
        c.ids.insert(id);
      } else if (!line.empty()) {
        ++c.other_lines;
      }
      line.clear();
      from = nl + 1;
    }
    line.append(chunk.substr(from));
  }
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return Status(StatusCode::kIoError, io_error("reading", path));
  c.torn_bytes = line.size();
  return c;
}

Result<std::unique_ptr<JsonlSink>> JsonlSink::open(const std::string& path, bool append) {
  std::unique_ptr<JsonlSink> s(new JsonlSink());
  s->path_ = path;
  s->owns_ = true;
  if (!append) {
    auto c = jsonl_read_contents(path);
    if (!c.is_ok()) return c.status();
    if (c.value().alerts + c.value().other_lines + c.value().torn_bytes > 0) {
      return Status(StatusCode::kInvalidArgument,
                    path + " already holds " + std::to_string(c.value().alerts) +
                        " alerts of a previous run: --append adds this run's alerts to it (alerts already there "
                        "are not written twice), --out-dir DIR writes this run's files to another folder; or "
                        "remove it");
    }
  }
  TS_RETURN_IF_ERROR(s->ensure_open());
  return s;
}

JsonlSink::JsonlSink(std::string path) : path_(std::move(path)), owns_(true) { (void)ensure_open(); }

JsonlSink::JsonlSink(std::FILE* out) : path_("<FILE>"), out_(out), owns_(false), prepared_(true) {}

JsonlSink::~JsonlSink() { (void)close(); }

Status JsonlSink::prepare_append() {
  auto c = jsonl_read_contents(path_);
  if (!c.is_ok()) return c.status();
  if (c.value().torn_bytes > 0) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return Status(StatusCode::kIoError, io_error("stat", path_));
    const off_t keep = st.st_size - off_t(c.value().torn_bytes);
    if (::truncate(path_.c_str(), keep) != 0) return Status(StatusCode::kIoError, io_error("repairing", path_));
    repaired_bytes_ = c.value().torn_bytes;
    spdlog::warn("jsonl {}: cut off a torn last line ({} bytes) left by an interrupted run", path_, repaired_bytes_);
  }
  if (c.value().other_lines > 0) {
    spdlog::warn("jsonl {}: {} lines without an alert id (not written by ticksentry) left as they are", path_,
                 c.value().other_lines);
  }
  previous_alerts_ = c.value().alerts;
  present_ = std::move(c.value().ids);
  prepared_ = true;
  return Status::ok();
}

Status JsonlSink::ensure_open() {
  if (out_) return Status::ok();
  if (closed_ || !owns_) return Status(StatusCode::kIoError, "jsonl " + path_ + ": closed");
  if (!prepared_) TS_RETURN_IF_ERROR(prepare_append());
  out_ = std::fopen(path_.c_str(), "a");
  if (!out_) return Status(StatusCode::kIoError, io_error("opening", path_));
  return Status::ok();
}

Status JsonlSink::write(const Alert& a, const SymbolTable& symbols) {
  TS_RETURN_IF_ERROR(ensure_open());
  if (!present_.empty() && present_.count(a.id)) {
    ++skipped_present_;
    return Status::ok();
  }
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
  ++written_;
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
