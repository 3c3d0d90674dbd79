#pragma once
// A ticksentry child run with --http 127.0.0.1:0: the port it printed.
#include <regex>
#include <string>

#include "kafka/kafka_test_util.h"

namespace ts::testing {

// Waits for the run's "dashboard: http://HOST:PORT/?token=..." line; the port, or 0.
inline int dashboard_port(const Child& c) {
  if (!wait_for_text(c.err, "dashboard: http://", 60)) return 0;
  std::smatch m;
  const std::string err = slurp(c.err);
  static const std::regex url(R"(dashboard: http://[^:/]+:([0-9]+)/)");
  return std::regex_search(err, m, url) ? std::stoi(m[1].str()) : 0;
}

}  // namespace ts::testing
