#include "app/first_input_error.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include <spdlog/sinks/base_sink.h>

#include "core/log.h"

namespace ts {

struct FirstInputError::Sink final : spdlog::sinks::base_sink<std::mutex> {
  std::string get() {
    std::lock_guard<std::mutex> lock(mutex_);
    return first;
  }

 protected:
  std::string first;

  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (!first.empty() || msg.level != spdlog::level::warn) return;
    const std::string_view text(msg.payload.data(), msg.payload.size());
    for (size_t k = 0; k < kInputErrorCount; ++k) {
      const std::string kind = std::string(": ") + input_error_name(static_cast<InputError>(k)) + ": ";
      if (text.find(kind) != std::string_view::npos) {
        first.assign(text);
        return;
      }
    }
  }
  void flush_() override {}
};

FirstInputError::FirstInputError() : sink_(std::make_shared<Sink>()) {
  spdlog::default_logger()->sinks().push_back(sink_);
}

FirstInputError::~FirstInputError() {
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
}

std::string FirstInputError::text() const {
  return sink_->get();
}

std::string FirstInputError::no_valid_record_message(uint64_t records_read, const InputErrors& errors,
                                                     const std::string& what) const {
  if (records_read > 0 || errors.total() == 0) return "";
  std::string kinds;
  for (const auto& [kind, n] : errors.by_kind()) kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  const std::string first = text();
  return "no valid record in " + what + ": " + std::to_string(errors.total()) + " bad records (" + kinds + ")" +
         (first.empty() ? "" : "; the first: " + first);
}

bool FirstInputError::no_valid_record(uint64_t records_read, const InputErrors& errors, const std::string& what) const {
  const std::string message = no_valid_record_message(records_read, errors, what);
  if (message.empty()) return false;
  std::fprintf(stderr, "ticksentry: %s\n", message.c_str());
  return true;
}

}  // namespace ts
