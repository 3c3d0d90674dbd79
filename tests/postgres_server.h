#pragma once
// A real PostgreSQL server for tests: initdb + pg_ctl from Debian's postgresql into a temporary
// directory, on a free loopback port, as the `postgres` user when the tests run as root (the
// server refuses to run as root). start() returns "" when it runs, else why it could not start
// (tests then skip, saying why). The destructor stops it and removes the directory.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ts::testing {

class PostgresServer {
 public:
  static constexpr const char* kPgBin = "/usr/lib/postgresql/15/bin";

  std::string start() {
    if (!std::filesystem::exists(std::string(kPgBin) + "/initdb")) return std::string("no ") + kPgBin + "/initdb (apt-get install postgresql)";
    char tmpl[] = "/tmp/ticksentry-pg-XXXXXX";
    if (!mkdtemp(tmpl)) return "mkdtemp failed";
    dir_ = tmpl;
    std::string as;
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (!pw) return "running as root and there is no 'postgres' user to run the server as";
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return "chown of " + dir_ + " failed";
      as = "runuser -u postgres -- ";
    }
    port_ = free_port();
    const std::string initdb = as + kPgBin + "/initdb -D " + dir_ + "/data -A trust -U postgres -E UTF8 --no-sync > " +
                               dir_ + "/initdb.log 2>&1";
    if (std::system(initdb.c_str()) != 0) return "initdb failed: " + read(dir_ + "/initdb.log");
    pg_ctl_ = as + kPgBin + "/pg_ctl -D " + dir_ + "/data";
    start_ = pg_ctl_ + " -l " + dir_ + "/server.log -w -t 120 -o \"-p " + std::to_string(port_) + " -k " + dir_ +
             " -c listen_addresses=127.0.0.1 -c fsync=off\" start > /dev/null 2>&1";
    if (std::system(start_.c_str()) != 0) return "pg_ctl start failed: " + read(dir_ + "/server.log");
    running_ = true;
    return "";
  }
  // An outage: stop() shuts the server down (fast: clients are disconnected at once); restart()
  // starts it again on the same port and data. Each returns whether it worked.
  bool stop() {
    running_ = std::system((pg_ctl_ + " -m fast -w stop > /dev/null 2>&1").c_str()) != 0;
    return !running_;
  }
  bool restart() {
    running_ = std::system(start_.c_str()) == 0;
    return running_;
  }
  ~PostgresServer() {
    if (running_) (void)std::system((pg_ctl_ + " -m immediate stop > /dev/null 2>&1").c_str());
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dsn() const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres user=postgres connect_timeout=10";
  }

 private:
  static int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ::close(fd);
      return 0;
    }
    const int port = ntohs(a.sin_port);
    ::close(fd);
    return port;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_, pg_ctl_, start_;
  int port_ = 0;
  bool running_ = false;
};

// A test suite sharing one server: started once per suite, each test skipped (saying why) when
// it could not start. `server()` is the running server.
class PostgresTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new PostgresServer();
    why_not_ = new std::string(server_->start());
  }
  static void TearDownTestSuite() {
    delete server_;
    delete why_not_;
    server_ = nullptr;
    why_not_ = nullptr;
  }
  void SetUp() override {
    if (!why_not_->empty()) GTEST_SKIP() << "PostgreSQL server could not start: " << *why_not_;
  }
  static const PostgresServer& server() { return *server_; }

 private:
  static inline PostgresServer* server_ = nullptr;
  static inline std::string* why_not_ = nullptr;
};

}  // namespace ts::testing
