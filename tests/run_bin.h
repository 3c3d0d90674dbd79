#pragma once
// Runs the ticksentry binary of the build (TICKSENTRY_BIN, defined by the test target) as a
// child process, stdout and stderr captured into files in `dir`; shared by the CLI tests.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace ts::testing {

struct Outcome {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;     // stdout
  std::string err;     // stderr
};

// cwd_in_dir: the child runs in `dir` (relative paths in args resolve there). sigint_after_ms > 0:
// SIGINT is sent that long after the start, or, when `sigint_after_data_in` names a file, that
// long after the file first holds data (polled every 20 ms, for at most 60 s): a test that
// interrupts a run mid-stream then does not depend on how fast a loaded machine gets there.
inline Outcome run_bin(const std::vector<std::string>& args, const std::filesystem::path& dir,
                       int sigint_after_ms = 0, bool cwd_in_dir = true,
                       const std::filesystem::path& sigint_after_data_in = {}) {
  const std::filesystem::path out_file = dir / "stdout.txt", err_file = dir / "stderr.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(out_file.c_str(), "w", stdout) || !freopen(err_file.c_str(), "w", stderr)) _exit(99);
    if (cwd_in_dir && chdir(dir.c_str()) != 0) _exit(98);
    std::vector<char*> argv{const_cast<char*>(TICKSENTRY_BIN)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TICKSENTRY_BIN, argv.data());
    _exit(97);
  }
  int status = 0;
  bool reaped = false;  // the child ended while we waited for data: its status is in `status`
  if (sigint_after_ms > 0 && !sigint_after_data_in.empty()) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::error_code ec;
    while (std::chrono::steady_clock::now() < give_up) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        reaped = true;
        break;
      }
      const auto size = std::filesystem::file_size(sigint_after_data_in, ec);
      if (!ec && size > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (sigint_after_ms > 0 && !reaped) {
    std::this_thread::sleep_for(std::chrono::milliseconds(sigint_after_ms));
    kill(pid, SIGINT);
  }
  if (!reaped) waitpid(pid, &status, 0);
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream fo(out_file), fe(err_file);
  o.out.assign(std::istreambuf_iterator<char>(fo), {});
  o.err.assign(std::istreambuf_iterator<char>(fe), {});
  return o;
}

}  // namespace ts::testing
