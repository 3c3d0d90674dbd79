#pragma once
// Logging (spdlog) for start-up, shutdown and slow paths; never per event on the hot path.
#include <spdlog/spdlog.h>

#include <string>

namespace ts {
// level: trace, debug, info, warn, error, off. Logs go to stderr so stdout stays for alerts.
void init_logging(const std::string& level);
}  // namespace ts
