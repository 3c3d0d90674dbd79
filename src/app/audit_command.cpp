#include "app/audit_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "audit/audit_store.h"
#include "core/config.h"
#include "notify/delivery_audit_store.h"

namespace ts {

namespace {

std::string utc_time(int64_t unix_ns) {
  const time_t s = time_t(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03d", int((unix_ns / 1'000'000) % 1000));
  return buf;
}

std::string ms(int64_t ns) {
  if (ns < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", double(ns) / 1e6);
  return buf;
}

std::string ids_text(const std::vector<uint64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 3; ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  if (ids.size() > 3) out += ",+" + std::to_string(ids.size() - 3);
  return out;
}

int64_t quantile(std::vector<int64_t> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

}  // namespace

AuditCommand::AuditCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("audit", "query the audit store");
  cmd_->require_subcommand(1);
  deliveries_ = cmd_->add_subcommand("deliveries", "notification deliveries: state, attempts, latency, last error");
  auto* db = deliveries_->add_option("--audit-db", audit_db_, "SQLite audit database (default ticksentry-audit.db)");
  auto* pg = deliveries_->add_option("--postgres-dsn", postgres_dsn_, "PostgreSQL audit store (libpq connection string)");
  auto* cfg = deliveries_->add_option("--config", config_path_, "the audit store of this config's [sinks]");
  db->excludes(pg)->excludes(cfg);
  pg->excludes(cfg);
  deliveries_->add_option("--receiver", receiver_, "only this receiver");
  deliveries_->add_option("--state", state_, "only this state")->check(CLI::IsMember({"pending", "delivered", "failed"}));
  deliveries_->add_option("--limit", limit_, "newest N rows (default 50)")->check(CLI::Range(1, 1'000'000));
  deliveries_->add_flag("--json", json_, "one JSON object per line instead of a table");
  alerts_ = add_audit_alerts(cmd_, &alerts_options_);
}

std::optional<int> AuditCommand::run() {
  if (!*cmd_) return std::nullopt;
  if (*alerts_) return run_audit_alerts(alerts_options_);
  if (!config_path_.empty()) {
    Config config = Config::load_file(config_path_);  // a bad file throws: exit 2 with its message
    auto s = config.section("sinks");
    if (s.get("audit_backend", "sqlite") == "postgres") {
      postgres_dsn_ = s.get("postgres_dsn", "");
    } else {
      audit_db_ = s.get("audit_db", "ticksentry-audit.db");
    }
  }
  if (postgres_dsn_.empty() && !std::filesystem::exists(audit_db_)) {
    std::fprintf(stderr, "ticksentry: %s: no such audit database\n", audit_db_.c_str());
    return 2;
  }
  auto store = postgres_dsn_.empty() ? notify::sqlite_delivery_audit(audit_db_)()
                                     : notify::postgres_delivery_audit(postgres_dsn_)();
  if (!store.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", store.status().to_string().c_str());
    return 2;
  }
  DeliveryQuery q;
  if (!receiver_.empty()) q.receiver = receiver_;
  if (!state_.empty()) q.state = state_;
  q.limit = limit_;
  auto rows = store.value()->deliveries(q);
  if (!rows.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", rows.status().to_string().c_str());
    return 2;
  }
  if (json_) {
    for (const auto& r : rows.value()) {
      nlohmann::json j = {{"outbox", r.outbox_uid},       {"id", r.notification_id},
                          {"receiver", r.receiver},       {"group_key", r.group_key},
                          {"status", r.status},           {"alert_ids", r.alert_ids},
                          {"state", r.state},             {"attempts", r.attempts},
                          {"enqueued_unix_ns", r.enqueued_unix_ns}, {"alert_unix_ns", r.alert_unix_ns},
                          {"delivered_unix_ns", r.delivered_unix_ns}, {"latency_ns", r.latency_ns},
                          {"alert_latency_ns", r.alert_latency_ns}, {"last_error", r.last_error}};
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    return 0;
  }
  std::printf("%8s  %-16s %-9s %8s  %-23s %12s %13s  %-24s %s\n", "id", "receiver", "state", "attempts", "enqueued (UTC)",
              "enq->dlv ms", "alert->dlv ms", "alerts", "last error");
  struct Summary {
    std::map<std::string, int> states;
    std::vector<int64_t> latency;
  };
  std::map<std::string, Summary> by_receiver;
  for (const auto& r : rows.value()) {
    std::printf("%8lld  %-16s %-9s %8d  %-23s %12s %13s  %-24s %s\n", (long long)r.notification_id, r.receiver.c_str(),
                r.state.c_str(), r.attempts, utc_time(r.enqueued_unix_ns).c_str(), ms(r.latency_ns).c_str(),
                ms(r.alert_latency_ns).c_str(), ids_text(r.alert_ids).c_str(), r.last_error.c_str());
    Summary& s = by_receiver[r.receiver];
    ++s.states[r.state];
    if (r.alert_latency_ns >= 0) s.latency.push_back(r.alert_latency_ns);
  }
  if (rows.value().empty()) std::printf("(no deliveries recorded in %s)\n", store.value()->describe().c_str());
  for (const auto& [name, s] : by_receiver) {
    std::printf("%s: %d delivered, %d failed, %d pending; alert → delivered p50 %s ms, p99 %s ms\n", name.c_str(),
                s.states.count("delivered") ? s.states.at("delivered") : 0,
                s.states.count("failed") ? s.states.at("failed") : 0, s.states.count("pending") ? s.states.at("pending") : 0,
                ms(quantile(s.latency, 0.5)).c_str(), ms(quantile(s.latency, 0.99)).c_str());
  }
  return 0;
}

}  // namespace ts
