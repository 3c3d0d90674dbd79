#pragma once
// Helpers for the Kafka tests: run the ticksentry binary as a background child process, read a
// whole topic back with a plain librdkafka consumer, and compare alerts by what a user sees.
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts::testing {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A ticksentry child process; stdout/stderr go to DIR/NAME.out and DIR/NAME.err.
struct Child {
  pid_t pid = -1;
  std::filesystem::path out, err;
  int exit_code = -1;  // after wait(): exit status, 128 + signal when killed, -1 still running
};

inline Child spawn(const std::vector<std::string>& args, const std::filesystem::path& dir, const std::string& name) {
  Child c;
  c.out = dir / (name + ".out");
  c.err = dir / (name + ".err");
  c.pid = fork();
  if (c.pid == 0) {
    if (!freopen(c.out.c_str(), "w", stdout) || !freopen(c.err.c_str(), "w", stderr)) _exit(99);
    if (chdir(dir.c_str()) != 0) _exit(98);
    std::vector<char*> argv{const_cast<char*>(TICKSENTRY_BIN)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TICKSENTRY_BIN, argv.data());
    _exit(97);
  }
  return c;
}

// Waits up to timeout_s for the child; kills it (SIGKILL) and returns -1 if it is still running.
inline int wait_child(Child& c, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(c.pid, &status, WNOHANG);
    if (r == c.pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      c.exit_code = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c.exit_code;
}

inline Child run_child(const std::vector<std::string>& args, const std::filesystem::path& dir, const std::string& name,
                       int timeout_s = 300) {
  Child c = spawn(args, dir, name);
  wait_child(c, timeout_s);
  return c;
}

// Waits until `needle` appears in the file (a child's log), up to timeout_s.
inline bool wait_for_text(const std::filesystem::path& file, const std::string& needle, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (slurp(file).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// What a user compares between two runs: type, symbol, exchange time and event sequence.
inline std::string alert_key(const nlohmann::json& a) {
  return a.at("type").get<std::string>() + "|" + a.at("symbol").get<std::string>() + "|" +
         a.at("exch_ts_ns").get<std::string>() + "|" + std::to_string(a.at("event_seq").get<uint64_t>());
}

inline std::multiset<std::string> jsonl_alert_keys(const std::filesystem::path& p) {
  std::multiset<std::string> keys;
  std::ifstream f(p);
  for (std::string line; std::getline(f, line);) {
    if (!line.empty()) keys.insert(alert_key(nlohmann::json::parse(line)));
  }
  return keys;
}

struct TopicMessage {
  std::string key, value;
  int32_t partition = 0;
  std::map<std::string, std::string> headers;
};

// Reads every message of `topic` (a fresh consumer group, from the beginning) until each
// partition is at its end; gives up after timeout_s.
inline std::vector<TopicMessage> read_topic(const std::string& brokers, const std::string& topic, int timeout_s = 60) {
  static int n = 0;
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::string group = "reader-" + std::to_string(getpid()) + "-" + std::to_string(++n);
  for (auto [k, v] : std::map<std::string, std::string>{{"bootstrap.servers", brokers},
                                                        {"group.id", group},
                                                        {"auto.offset.reset", "earliest"},
                                                        {"enable.partition.eof", "true"},
                                                        {"log_level", "3"}}) {
    rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* t = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(t, topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_subscribe(rk, t);
  rd_kafka_topic_partition_list_destroy(t);
  std::vector<TopicMessage> out;
  std::set<int32_t> eof;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      eof.insert(m->partition);
      rd_kafka_topic_partition_list_t* a = nullptr;
      const bool all = !rd_kafka_assignment(rk, &a) && a && a->cnt > 0 && int(eof.size()) >= a->cnt;
      if (a) rd_kafka_topic_partition_list_destroy(a);
      rd_kafka_message_destroy(m);
      if (all) break;
      continue;
    }
    if (!m->err) {
      TopicMessage tm;
      tm.partition = m->partition;
      if (m->key) tm.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) tm.value.assign(static_cast<const char*>(m->payload), m->len);
      rd_kafka_headers_t* h = nullptr;
      if (!rd_kafka_message_headers(m, &h)) {
        const char* name;
        const void* val;
        size_t size;
        for (size_t i = 0; !rd_kafka_header_get_all(h, i, &name, &val, &size); ++i) {
          tm.headers[name] = std::string(static_cast<const char*>(val), size);
        }
      }
      eof.erase(m->partition);
      out.push_back(std::move(tm));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

}  // namespace ts::testing
