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

bool FirstInputError::no_valid_record(uint64_t records_read, const InputErrors& errors, const std::string& what) const {
  if (records_read > 0 || errors.total() == 0) return false;
  std::string kinds;
  for (const auto& [kind, n] : errors.by_kind()) kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  const std::string first = text();
  std::fprintf(stderr, "ticksentry: no valid record in %s: %llu bad records (%s)%s%s\n", what.c_str(),
               (unsigned long long)errors.total(), kinds.c_str(), first.empty() ? "" : "; the first: ", first.c_str());
  return true;
}

}  // namespace ts
