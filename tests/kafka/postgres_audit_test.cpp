// The PostgreSQL audit backend against a real server: initdb + pg_ctl from Debian's postgresql
// into a temporary directory, on a loopback port, as the `postgres` user when the tests run as
// root (the server refuses to run as root). Skipped, saying why, only if the server cannot start.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>

#include <cstdlib>
#include <fstream>

#include "audit/postgres_store.h"
#include "kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

constexpr const char* kPgBin = "/usr/lib/postgresql/15/bin";

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

class PostgresServer {
 public:
  // Empty when the server runs; otherwise why it could not start.
  std::string start() {
    char tmpl[] = "/tmp/ticksentry-pg-XXXXXX";
    if (!mkdtemp(tmpl)) return "mkdtemp failed";
    dir_ = tmpl;
    std::string as = "";
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (!pw) return "running as root and there is no 'postgres' user to run the server as";
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return "chown of " + dir_ + " failed";
      as = "runuser -u postgres -- ";
    }
    port_ = free_port();
    const std::string initdb = as + kPgBin + "/initdb -D " + dir_ + "/data -A trust -U postgres -E UTF8 --no-sync > " +
                               dir_ + "/initdb.log 2>&1";
    if (std::system(initdb.c_str()) != 0) return "initdb failed: " + slurp(dir_ + "/initdb.log");
    pg_ctl_ = as + kPgBin + "/pg_ctl -D " + dir_ + "/data";
    const std::string start = pg_ctl_ + " -l " + dir_ + "/server.log -w -t 120 -o \"-p " + std::to_string(port_) +
                              " -k " + dir_ + " -c listen_addresses=127.0.0.1 -c fsync=off\" start > /dev/null 2>&1";
    if (std::system(start.c_str()) != 0) return "pg_ctl start failed: " + slurp(dir_ + "/server.log");
    running_ = true;
    return "";
  }
  ~PostgresServer() {
    if (running_) (void)std::system((pg_ctl_ + " -m immediate stop > /dev/null 2>&1").c_str());
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dsn() const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres user=postgres connect_timeout=10";
  }

 private:
  std::string dir_, pg_ctl_;
  int port_ = 0;
  bool running_ = false;
};

class PostgresAudit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new PostgresServer();
    why_not_ = new std::string(server_->start());
  }
  static void TearDownTestSuite() {
    delete server_;
    delete why_not_;
  }
  void SetUp() override {
    if (!why_not_->empty()) GTEST_SKIP() << "PostgreSQL server could not start: " << *why_not_;
  }
  static PostgresServer* server_;
  static std::string* why_not_;
};
PostgresServer* PostgresAudit::server_ = nullptr;
std::string* PostgresAudit::why_not_ = nullptr;

TEST_F(PostgresAudit, AnAlertIdIsStoredOnceAcrossConnections) {
  SymbolTable symbols;
  Alert a;
  a.symbol = symbols.intern("600519.SH");
  a.type = AlertType::kLargeSell;
  a.exch_ts_ns = 1'675'213'867'120'000'000;
  a.event_seq = 5;
  a.price = 185012;
  a.add_value("qty", 90000, 50000, Cmp::kGe);
  a.id = alert_id("600519.SH", a.type, a.exch_ts_ns, a.event_seq);
  Alert b = a;
  b.event_seq = 6;
  b.id = ~uint64_t(0) - 3;  // ids use all 64 bits; BIGINT holds them as signed
  for (int round = 0; round < 2; ++round) {
    auto store = PostgresStore::open(server_->dsn());
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(b, symbols).is_ok());
    ASSERT_TRUE(store.value()->flush().is_ok());
    EXPECT_EQ(store.value()->count().value(), 2) << "round " << round;
    EXPECT_EQ(store.value()->distinct_ids().value(), 2);
  }
}

TEST_F(PostgresAudit, BadDsnIsAClearError) {
  auto store = PostgresStore::open("host=127.0.0.1 port=1 dbname=postgres connect_timeout=5");
  ASSERT_FALSE(store.is_ok());
  EXPECT_NE(store.status().message().find("PQconnectdb"), std::string::npos) << store.status().message();
}

// Two instances at once, sharing the store chosen in config: every alert stored exactly once.
TEST_F(PostgresAudit, TwoInstancesShareOneStoreWithoutDuplicates) {
  const auto dir = scratch_dir("postgres_audit");
  {
    std::ofstream cfg(dir / "pg.toml");
    cfg << "[sinks]\naudit_backend = \"postgres\"\npostgres_dsn = \"" << server_->dsn() << "\"\n";
  }
  const std::string data = lobster_file("GOOG", "message", 10).string();
  int64_t before = 0;
  {
    auto store = PostgresStore::open(server_->dsn());
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    before = store.value()->count().value();
  }
  Child one = spawn({"replay", "--format", "lobster", data, "--config", "pg.toml", "--no-stdout", "--jsonl", "one.jsonl"},
                    dir, "one");
  Child two = spawn({"replay", "--format", "lobster", data, "--config", "pg.toml", "--no-stdout", "--jsonl", "two.jsonl"},
                    dir, "two");
  ASSERT_EQ(wait_child(one, 300), 0) << slurp(one.err);
  ASSERT_EQ(wait_child(two, 300), 0) << slurp(two.err);
  const auto alerts = jsonl_alert_keys(dir / "one.jsonl");
  ASSERT_FALSE(alerts.empty());
  EXPECT_EQ(jsonl_alert_keys(dir / "two.jsonl"), alerts);
  EXPECT_FALSE(std::filesystem::exists(dir / "ticksentry-audit.db")) << "postgres replaces the SQLite store";
  auto store = PostgresStore::open(server_->dsn());
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  EXPECT_EQ(store.value()->count().value(), before + int64_t(alerts.size()));
  EXPECT_EQ(store.value()->distinct_ids().value(), store.value()->count().value());
}

}  // namespace
}  // namespace ts::testing
