#include "app/audit_alerts.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/time_arg.h"
#include "audit/alert_format.h"
#include "audit/alert_json.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "features/feature_set.h"

namespace ts {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitNotFound = 1;
constexpr int kExitUsage = 2;

int fail(const Status& s) {
  std::fprintf(stderr, "ticksentry: %s\n", s.to_string().c_str());
  return kExitUsage;
}

bool known_type(const std::string& t) {
  for (int i = 0; i < kAlertTypeCount; ++i) {
    if (t == alert_type_name(static_cast<AlertType>(i))) return true;
  }
  return false;
}

std::string values_text(const AlertRecord& r) {
  std::string out;
  for (const auto& v : r.values) {
    if (!out.empty()) out += ' ';
    out += v.name + "=" + format_number(v.value);
    if (v.cmp != "info") out += " (" + v.cmp + format_number(v.threshold) + ")";
  }
  return out;
}

std::string us(int64_t ns) {
  if (ns < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", double(ns) / 1e3);
  return buf;
}

int64_t delta(int64_t later, int64_t earlier) { return later > 0 && earlier > 0 ? later - earlier : -1; }

// A price as stored, without format_number's rounding to 4 significant digits (564.59, not 564.6).
std::string price_text(double price) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", price);
  return buf;
}

// The book around the alert: bids left, asks right, best first, exact decimals.
void print_book(const BookRecord& b) {
  if (!b.present) {
    std::printf("  book            not stored (an alert written before the audit store kept the book)\n");
    return;
  }
  const size_t n = std::max(b.bids.size(), b.asks.size());
  if (n == 0) {
    std::printf("  book            empty on both sides\n");
    return;
  }
  std::printf("  book when it was raised (best first)\n");
  std::printf("    %14s %14s | %-14s %-14s\n", "bid size", "bid", "ask", "ask size");
  for (size_t i = 0; i < n; ++i) {
    const BookLevelRecord* bid = i < b.bids.size() ? &b.bids[i] : nullptr;
    const BookLevelRecord* ask = i < b.asks.size() ? &b.asks[i] : nullptr;
    std::printf("    %14s %14s | %-14s %-14s\n", bid ? bid->size_text.c_str() : "", bid ? bid->price_text.c_str() : "",
                ask ? ask->price_text.c_str() : "", ask ? ask->size_text.c_str() : "");
  }
}

// An alert's exchange time as RFC 3339 in its exchange's zone, from the symbol's market
// ("2012-06-21T15:59:36.599886519-04:00" for GOOG, "+08:00" for 600519.SH, "+00:00" for a
// crypto pair or a market the name does not tell).
std::string exchange_time_text(const std::string& symbol, int64_t exch_ts_ns) {
  return format_local_ns(exch_ts_ns, exchange_utc_offset_hours(market_of(symbol), exch_ts_ns) * 3600);
}

}  // namespace

CLI::App* add_audit_alerts(CLI::App* audit, AuditAlertsOptions* o) {
  auto* c = audit->add_subcommand("alerts", "alerts in the audit store: filter by symbol, type, exchange time");
  add_alert_store_options(c, &o->store);
  c->add_option("--symbol", o->symbol, "only this symbol");
  c->add_option("--type", o->type, "only this alert type (rapid_rise, large_buy, model, ...)");
  c->add_option("--since", o->since, "exchange time from (inclusive): ns or 2012-06-21T09:30:00-04:00");
  c->add_option("--until", o->until, "exchange time to (exclusive)");
  c->add_option("--limit", o->limit, "newest N alerts (default 50)")->check(CLI::Range(1, 10'000'000));
  c->add_flag("--json", o->json, "one JSON object per line (the JSONL schema, docs/audit.md)");
  return c;
}

int run_audit_alerts(const AuditAlertsOptions& o) {
  AlertQuery q;
  q.limit = o.limit;
  if (!o.symbol.empty()) q.symbol = o.symbol;
  if (!o.type.empty()) {
    if (!known_type(o.type)) return fail(Status(StatusCode::kInvalidArgument, "--type: unknown alert type '" + o.type + "'"));
    q.type = o.type;
  }
  for (auto [text, out, flag] : {std::tuple{&o.since, &q.since_exch_ns, "--since"}, std::tuple{&o.until, &q.until_exch_ns, "--until"}}) {
    if (text->empty()) continue;
    auto t = parse_exchange_time(*text);
    if (!t.is_ok()) return fail(t.status().with_context(flag));
    *out = t.value();
  }
  auto reader = AlertReader::open(o.store);
  if (!reader.is_ok()) return fail(reader.status());
  auto rows = reader.value()->query(q);
  if (!rows.is_ok()) return fail(rows.status());
  if (o.json) {
    for (const auto& r : rows.value()) {
      std::printf("%s\n", alert_record_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    return kExitOk;
  }
  std::printf("%-35s  %-12s %-22s %-8s %12s  %-16s  %s\n", "exchange time (exchange zone)", "symbol", "type", "severity", "price",
              "id", "values (threshold)");
  for (const auto& r : rows.value()) {
    std::printf("%-35s  %-12s %-22s %-8s %12s  %-16llu  %s\n", exchange_time_text(r.symbol, r.exch_ts_ns).c_str(), r.symbol.c_str(),
                r.type.c_str(), r.severity.c_str(), price_text(r.price).c_str(), (unsigned long long)r.alert_id,
                values_text(r).c_str());
  }
  std::printf("(%zu alerts, newest first, from %s)\n", rows.value().size(), reader.value()->describe().c_str());
  return kExitOk;
}

ExplainCommand::ExplainCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("explain", "one alert from the audit store: what fired, the feature row, stages, model");
  cmd_->add_option("id", id_, "the alert id (as in the JSONL file, the dashboard, notifications)")->required();
  add_alert_store_options(cmd_, &store_);
  cmd_->add_flag("--json", json_, "one JSON object (the JSONL schema plus \"model_input\")");
}

std::optional<int> ExplainCommand::run() {
  if (!*cmd_) return std::nullopt;
  auto reader = AlertReader::open(store_);
  if (!reader.is_ok()) return fail(reader.status());
  AlertQuery q;
  q.alert_id = id_;
  q.limit = 1;
  auto rows = reader.value()->query(q);
  if (!rows.is_ok()) return fail(rows.status());
  if (rows.value().empty()) {
    std::fprintf(stderr, "ticksentry: no alert %llu in %s\n", (unsigned long long)id_, reader.value()->describe().c_str());
    return kExitNotFound;
  }
  const AlertRecord& r = rows.value().front();
  auto input = reader.value()->model_input(id_);
  if (!input.is_ok()) return fail(input.status());
  if (json_) {
    nlohmann::json j = alert_record_json(r);
    j["book"] = book_record_json(r.book);
    if (input.value()) {
      const ModelInputRecord& m = *input.value();
      j["model_input"] = {{"model", m.model},         {"version", m.version}, {"probability", m.probability},
                          {"threshold", m.threshold}, {"shadow", m.shadow},   {"rows", m.rows},
                          {"cols", m.cols},           {"window", m.window}};
    }
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::printf("alert %llu: %s %s %s\n", (unsigned long long)r.alert_id, r.symbol.c_str(), r.type.c_str(), r.severity.c_str());
  std::printf("  exchange time   %s (%lld ns)\n", exchange_time_text(r.symbol, r.exch_ts_ns).c_str(), (long long)r.exch_ts_ns);
  std::printf("  event sequence  %llu\n", (unsigned long long)r.event_seq);
  std::printf("  price           %s (%lld ticks)\n", price_text(r.price).c_str(), (long long)r.price_ticks);
  std::printf("  fired on\n");
  for (const auto& v : r.values) {
    std::printf("    %-24s %14s  %s %s\n", v.name.c_str(), format_number(v.value).c_str(),
                v.cmp == "info" ? "(context)" : v.cmp.c_str(), v.cmp == "info" ? "" : format_number(v.threshold).c_str());
  }
  const StageTimes& t = r.t;
  std::printf("  stages (us)     book %s, features %s, detect %s, emit %s; receive -> alert %s\n",
              us(delta(t.book_ns, t.recv_ns)).c_str(), us(delta(t.features_ns, t.book_ns)).c_str(),
              us(delta(t.detect_ns, t.features_ns)).c_str(), us(delta(t.emit_ns, t.detect_ns)).c_str(),
              us(r.latency_ns).c_str());
  if (input.value()) {
    const ModelInputRecord& m = *input.value();
    std::printf("  model           %s v%u%s: probability %s (threshold %s), window %d rows x %d features stored\n",
                m.model.c_str(), m.version, m.shadow ? " (shadow)" : "", format_number(m.probability).c_str(),
                format_number(m.threshold).c_str(), m.rows, m.cols);
  } else if (r.model.present) {
    std::printf("  model           %s v%u%s: probability %s (threshold %s); window not stored in %s\n", r.model.name.c_str(),
                r.model.version, r.model.shadow ? " (shadow)" : "", format_number(r.model.probability).c_str(),
                format_number(r.model.threshold).c_str(), reader.value()->describe().c_str());
  } else if (r.type == "model") {
    std::printf("  model           window not stored in %s\n", reader.value()->describe().c_str());
  }
  print_book(r.book);
  std::printf("  features (the row that fired it)\n");
  for (int i = 0; i < kFeatureCount && size_t(i) < r.features.size(); ++i) {
    const float f = r.features[size_t(i)];
    std::printf("    %-24s %14s\n", feature_name(i), std::isfinite(f) ? format_number(f).c_str() : "n/a");
  }
  return kExitOk;
}

}  // namespace ts
