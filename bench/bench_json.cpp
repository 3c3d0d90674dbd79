#include "bench_json.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace ts::bench {

namespace {
std::string run_cmd(const char* cmd) {
  std::string out;
  if (FILE* p = popen(cmd, "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}
}  // namespace

nlohmann::json machine_info() {
  const char* name = std::getenv("TICKSENTRY_MACHINE");
  std::string cpu = run_cmd("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'");
  return {{"name", name ? name : "cpu2"},
          {"cpu", cpu},
          {"cores", std::thread::hardware_concurrency()},
          {"kernel", run_cmd("uname -r")}};
}

std::string git_commit() {
  // Set where the source tree's git is not the built commit (binaries carried to a GPU machine).
  if (const char* env = std::getenv("TICKSENTRY_COMMIT"); env && *env) return env;
  std::string c = run_cmd("git -C " TICKSENTRY_SOURCE_DIR " rev-parse --short HEAD 2>/dev/null");
  std::string dirty =
      run_cmd("git -C " TICKSENTRY_SOURCE_DIR " status --porcelain --untracked-files=no 2>/dev/null | head -1");
  return c.empty() ? "unknown" : (dirty.empty() ? c : c + "-dirty");
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-+=.,/:@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string write_results(const std::string& dir, const std::string& benchmark, const Invocation& run,
                          const nlohmann::json& results) {
  nlohmann::json doc;
  doc["benchmark"] = benchmark;
  doc["date"] = utc_now_iso();
  doc["commit"] = git_commit();
  doc["machine"] = machine_info();
  doc["command"] = run.command;
  doc["settings"] = run.settings.is_null() ? nlohmann::json::object() : run.settings;
  doc["results"] = results;
  std::time_t t = std::time(nullptr);
  char day[16];
  std::strftime(day, sizeof day, "%Y%m%d", std::gmtime(&t));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + benchmark + "-" + doc["machine"]["name"].get<std::string>() + "-" + day + ".json";
  std::ofstream(path) << doc.dump(2) << "\n";
  return path;
}

}  // namespace ts::bench
