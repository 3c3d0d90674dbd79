#pragma once
// What /metrics adds to the registry's series at each scrape, by Prometheus conventions:
//   ticksentry_build_info{version, commit, compiler} 1
//   process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
//   process_start_time_seconds, process_open_fds, process_max_fds, process_threads
// (the names and meanings of the official client libraries' process collector, read from
// /proc/self on Linux; a series whose file cannot be read is left out).
// Threading: any thread (reads /proc each call).
#include <string>

namespace ts::http {

std::string process_metrics_text();
std::string build_info_text();

}  // namespace ts::http
