#pragma once
// Starts a loopback peer script (webhook_peer.py, smtp_peer.py) under /usr/bin/python3 for one
// test, waits for the port it writes, reads the JSON lines it logs, and kills it on destruction.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts::testing {

class PeerProcess {
 public:
  // `script`: a file in tests/notify; `args` are passed after --port-file and --log.
  PeerProcess(const std::string& script, const std::filesystem::path& dir, const std::string& name,
              std::vector<std::string> args = {})
      : port_file_(dir / (name + ".port")), log_(dir / (name + ".jsonl")) {
    std::filesystem::remove(port_file_);
    const std::string path = std::string(TICKSENTRY_SOURCE_DIR) + "/tests/notify/" + script;
    std::vector<std::string> argv{"/usr/bin/python3", path, "--port-file", port_file_.string(), "--log", log_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      if (!freopen((dir / (name + ".stderr")).c_str(), "a", stderr)) _exit(99);
      execv(cargv[0], cargv.data());
      _exit(97);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(port_file_)) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("peer " + script + " did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ifstream(port_file_) >> port_;
  }
  ~PeerProcess() { kill_now(); }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  int port() const { return port_; }
  void kill_now() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // Every request/message the peer logged so far.
  std::vector<nlohmann::json> received() const {
    std::vector<nlohmann::json> out;
    std::ifstream f(log_);
    for (std::string line; std::getline(f, line);) {
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    }
    return out;
  }
  const std::filesystem::path& log_path() const { return log_; }

 private:
  std::filesystem::path port_file_, log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Polls `cond` every 20 ms for up to `timeout_s` (generous: the CI machine is loaded).
inline bool wait_for(const std::function<bool()>& cond, double timeout_s = 30) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A TCP port nothing listens on (bound and released), for a receiver that is down.
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace ts::testing
