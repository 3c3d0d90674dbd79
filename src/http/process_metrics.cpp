#include "http/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef TICKSENTRY_VERSION
#define TICKSENTRY_VERSION "unknown"
#endif
#ifndef TICKSENTRY_GIT_COMMIT
#define TICKSENTRY_GIT_COMMIT "unknown"
#endif

namespace ts::http {

namespace {

void series(std::string& out, const char* name, const char* type, const char* help, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + buf + "\n";
}

// Fields of /proc/self/stat after the command name (which may hold spaces): field 3 is [0].
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> f;
  for (std::string s; rest >> s;) f.push_back(s);
  return f;
}

double boot_time_s() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double v = 0;
      in >> v;
      return v;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

}  // namespace

std::string process_metrics_text() {
  std::string out;
  const double ticks = double(sysconf(_SC_CLK_TCK)), page = double(sysconf(_SC_PAGESIZE));
  const std::vector<std::string> f = stat_fields();
  // stat(5): utime 14, stime 15, num_threads 20, starttime 22, vsize 23, rss 24 (1-based).
  if (f.size() > 21 && ticks > 0) {
    series(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
           (std::stod(f[11]) + std::stod(f[12])) / ticks);
    series(out, "process_threads", "gauge", "Number of OS threads in the process.", std::stod(f[17]));
    const double boot = boot_time_s();
    if (boot > 0) {
      series(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
             boot + std::stod(f[19]) / ticks);
    }
    series(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", std::stod(f[20]));
    series(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", std::stod(f[21]) * page);
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    int n = 0;
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
    series(out, "process_open_fds", "gauge", "Number of open file descriptors.", double(n - 1));  // less opendir's own
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    series(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", double(rl.rlim_cur));
  }
  return out;
}

std::string build_info_text() {
#if defined(__clang__)
  const std::string compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = "gcc " __VERSION__;
#else
  const std::string compiler = "unknown";
#endif
  return "# HELP ticksentry_build_info The build: version, git commit and compiler (value 1).\n"
         "# TYPE ticksentry_build_info gauge\n"
         "ticksentry_build_info{version=\"" TICKSENTRY_VERSION "\",commit=\"" TICKSENTRY_GIT_COMMIT "\",compiler=\"" +
         compiler + "\"} 1\n";
}

}  // namespace ts::http
