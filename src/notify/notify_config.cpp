#include "notify/notify_config.h"

#include <algorithm>
#include <map>
#include <set>

#include <toml++/toml.h>

#include "notify/toml_reader.h"

namespace ts::notify {

namespace {

template <typename T>
T must(Result<T> r, TomlReader& rd, const std::string& key) {
  if (!r.is_ok()) rd.fail(key, r.status().message());
  return std::move(r).value();
}

// A duration in ms: 0 .. 7 days.
int64_t non_negative(TomlReader& rd, const std::string& key, int64_t def) {
  return rd.integer_in(key, def, 0, 7 * int64_t(86'400'000));
}

TimeWindow read_window(TomlReader rd) {
  TimeWindow w;
  w.name = rd.str("name", "");
  if (w.name.empty()) rd.fail("name", "every time window needs a name");
  if (rd.has("time_zone")) {
    if (rd.has("utc_offset_hours") || rd.has("utc_offset_minutes")) {
      rd.fail("time_zone", "give time_zone or a fixed utc_offset_hours/utc_offset_minutes, not both");
    }
    w.zone = must(TimeZone::load(rd.str("time_zone", "")), rd, "time_zone");
  }
  const int64_t off_min = rd.integer_in("utc_offset_minutes", rd.integer_in("utc_offset_hours", 0, -14, 14) * 60, -14 * 60, 14 * 60);
  if (off_min < -14 * 60 || off_min > 14 * 60) rd.fail("utc_offset_minutes", "must be within ±14 h");
  w.utc_offset_minutes = int(off_min);
  w.weekday_mask = must(parse_weekdays(rd.strings("weekdays")), rd, "weekdays");
  for (const auto& t : rd.strings("times")) w.times.push_back(must(parse_time_range(t), rd, "times"));
  for (const auto& d : rd.strings("exclude_dates")) w.exclude_days.push_back(must(parse_date_days(d), rd, "exclude_dates"));
  std::sort(w.exclude_days.begin(), w.exclude_days.end());
  rd.finish();
  return w;
}

struct Ctx {
  std::map<std::string, TimeWindow> windows;
  std::set<std::string> receivers;
};

std::vector<TimeWindow> window_refs(TomlReader& rd, const std::string& key, const Ctx& ctx) {
  std::vector<TimeWindow> out;
  for (const auto& name : rd.strings(key)) {
    auto it = ctx.windows.find(name);
    if (it == ctx.windows.end()) rd.fail(key, "no time window named '" + name + "' in [[notify.time_windows]]");
    out.push_back(it->second);
  }
  return out;
}

// `parent`: the values a child inherits (the root inherits the defaults).
Route read_route(TomlReader rd, const Route& parent, std::string id, const Ctx& ctx, bool is_root) {
  Route r;
  r.id = std::move(id);
  r.receiver = rd.str("receiver", parent.receiver);
  if (r.receiver.empty()) rd.fail("receiver", "the root route needs a receiver");
  if (!ctx.receivers.count(r.receiver)) rd.fail("receiver", "no receiver named '" + r.receiver + "' in [[notify.receivers]]");
  r.group_by = rd.has("group_by") ? rd.strings("group_by") : parent.group_by;
  r.group_wait_ms = non_negative(rd, "group_wait_ms", parent.group_wait_ms);
  r.group_interval_ms = non_negative(rd, "group_interval_ms", parent.group_interval_ms);
  r.repeat_interval_ms = non_negative(rd, "repeat_interval_ms", parent.repeat_interval_ms);
  if (r.repeat_interval_ms < r.group_interval_ms) rd.fail("repeat_interval_ms", "must be >= group_interval_ms");
  r.send_resolved = rd.boolean("send_resolved", parent.send_resolved);
  if (!is_root) {
    r.matchers = must(parse_matchers(rd.strings("matchers")), rd, "matchers");
    r.continue_matching = rd.boolean("continue", false);
  }
  r.active_time_windows = window_refs(rd, "active_time_windows", ctx);
  r.mute_time_windows = window_refs(rd, "mute_time_windows", ctx);
  int i = 0;
  for (const toml::table* child : rd.tables("routes")) {
    const std::string cid = r.id + "." + std::to_string(i);
    r.routes.push_back(read_route(TomlReader(*child, rd.key_path("routes[" + std::to_string(i) + "]")), r, cid, ctx, false));
    ++i;
  }
  rd.finish();
  return r;
}

// `base`: the policy the table overrides (the defaults for [notify.retry], that for a receiver's).
RetryPolicy read_retry(TomlReader rd, const RetryPolicy& base) {
  RetryPolicy p = base;
  p.initial_backoff_ms = rd.integer_in("initial_backoff_ms", p.initial_backoff_ms, 1, 86'400'000);
  p.max_backoff_ms = rd.integer_in("max_backoff_ms", p.max_backoff_ms, 1, 86'400'000);
  p.multiplier = rd.number_in("multiplier", p.multiplier, 1.0, 100.0);
  p.jitter = rd.number("jitter", p.jitter);
  const int64_t attempts = rd.integer("max_attempts", p.max_attempts);
  p.give_up_after_ms = rd.integer_in("give_up_after_ms", p.give_up_after_ms, 1, 365 * int64_t(86'400'000));
  if (p.initial_backoff_ms < 1) rd.fail("initial_backoff_ms", "must be >= 1");
  if (p.max_backoff_ms < p.initial_backoff_ms) {
    rd.fail("max_backoff_ms", "must be >= initial_backoff_ms (" + std::to_string(p.initial_backoff_ms) + ")");
  }
  if (p.multiplier < 1) rd.fail("multiplier", "must be >= 1");
  if (p.jitter < 0 || p.jitter >= 1) rd.fail("jitter", "must be in [0, 1)");
  if (attempts < 0 || attempts > 1'000'000) rd.fail("max_attempts", "must be in 0..1000000 (0: no limit)");
  p.max_attempts = int(attempts);
  if (p.give_up_after_ms < 1) rd.fail("give_up_after_ms", "must be >= 1");
  rd.finish();
  return p;
}

ReceiverKind kind_of(TomlReader& rd) {
  const std::string t = rd.str("type", "");
  for (int k = 0; k <= int(ReceiverKind::kSms); ++k) {
    if (t == receiver_kind_name(ReceiverKind(k))) return ReceiverKind(k);
  }
  rd.fail("type", "'" + t + "': expected webhook, slack, wecom, dingtalk, feishu, email or sms");
}

ReceiverConfig read_receiver(TomlReader rd, const RetryPolicy& retry) {
  ReceiverConfig c;
  c.name = rd.str("name", "");
  if (c.name.empty()) rd.fail("name", "every receiver needs a name");
  c.kind = kind_of(rd);
  c.url = rd.str("url", "");
  const bool email = c.kind == ReceiverKind::kEmail;
  if (c.url.empty()) rd.fail("url", email ? "required (smtp://host:port)" : "required (the webhook or gateway URL)");
  if (email && c.url.rfind("smtp://", 0) != 0 && c.url.rfind("smtps://", 0) != 0) rd.fail("url", "expected smtp:// or smtps://");
  if (!email && c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0) rd.fail("url", "expected http:// or https://");
  c.secret = rd.str("secret", "");
  if (!c.secret.empty() && c.kind != ReceiverKind::kDingTalk && c.kind != ReceiverKind::kFeishu) {
    rd.fail("secret", "only dingtalk and feishu receivers sign their requests");
  }
  c.title = must(Template::parse(rd.str("title", "[{{status}}] {{count}} alert(s) {{group}}")), rd, "title");
  c.text = must(Template::parse(rd.str("text", "{{alerts}}")), rd, "text");
  c.max_alerts = int(rd.integer_in("max_alerts", 20, 1, 10'000));
  if (c.max_alerts < 1) rd.fail("max_alerts", "must be >= 1");
  c.timeout_ms = rd.integer_in("timeout_ms", 5000, 1, 600'000);
  if (c.timeout_ms < 1) rd.fail("timeout_ms", "must be >= 1");
  c.rate_per_s = rd.number_in("rate_per_s", 10.0, 1e-6, 1e6);
  c.burst = int(rd.integer_in("burst", 20, 1, 1'000'000));
  if (c.rate_per_s <= 0 || c.burst < 1) rd.fail("rate_per_s", "rate_per_s must be > 0 and burst >= 1");
  c.headers = rd.strings("headers");
  c.retry = retry;
  if (const toml::table* r = rd.table("retry")) c.retry = read_retry(TomlReader(*r, rd.key_path("retry")), retry);
  c.to = rd.strings("to");
  if ((email || c.kind == ReceiverKind::kSms) && c.to.empty()) rd.fail("to", email ? "at least one address" : "at least one number");
  if (email) {
    c.from = rd.str("from", "");
    if (c.from.empty()) rd.fail("from", "required for email");
    c.username = rd.str("username", "");
    c.password = rd.str("password", "");
    const std::string st = rd.str("starttls", "try");
    if (st == "off") c.starttls = 0;
    else if (st == "try") c.starttls = 1;
    else if (st == "required") c.starttls = 2;
    else rd.fail("starttls", "expected off, try or required");
    c.tls_verify = rd.boolean("tls_verify", true);
    c.ca_file = rd.str("ca_file", "");
  }
  if (c.kind == ReceiverKind::kSms) {
    c.content_type = rd.str("content_type", "application/json");
    c.body = must(Template::parse(rd.str("body", R"({"to":"{{to}}","text":"{{text}}"})")), rd, "body");
  }
  rd.finish();
  return c;
}

InhibitRule read_inhibit(TomlReader rd) {
  InhibitRule r;
  r.source_matchers = must(parse_matchers(rd.strings("source_matchers")), rd, "source_matchers");
  r.target_matchers = must(parse_matchers(rd.strings("target_matchers")), rd, "target_matchers");
  if (r.source_matchers.empty()) rd.fail("source_matchers", "required (which alerts mute others)");
  if (r.target_matchers.empty()) rd.fail("target_matchers", "required (which alerts are muted)");
  r.equal = rd.strings("equal");
  r.duration_ms = rd.integer_in("duration_ms", r.duration_ms, 1, 7 * int64_t(86'400'000));
  if (r.duration_ms < 1) rd.fail("duration_ms", "must be >= 1");
  rd.finish();
  return r;
}

}  // namespace

bool has_notify_section(const Config& config) { return config.section("notify").claim_table() != nullptr; }

NotifyConfig read_notify_config(const Config& config) {
  const toml::table* t = config.section("notify").claim_table();
  NotifyConfig c;
  if (!t) return c;
  TomlReader rd(*t, "notify");
  c.outbox_db = rd.str("outbox_db", c.outbox_db);
  if (c.outbox_db.empty()) rd.fail("outbox_db", "must name a file");
  c.outbox_sync_full = rd.boolean("outbox_sync_full", c.outbox_sync_full);
  c.queue_capacity = int(rd.integer_in("queue_capacity", c.queue_capacity, 1, 1 << 22));
  if (c.queue_capacity < 1) rd.fail("queue_capacity", "must be >= 1");
  const std::string ts = rd.str("time_source", "exchange");
  if (ts != "exchange" && ts != "wall") rd.fail("time_source", "expected exchange or wall");
  c.time_by_exchange = ts == "exchange";
  c.drain_ms = non_negative(rd, "drain_ms", c.drain_ms);
  Ctx ctx;
  int i = 0;
  for (const toml::table* w : rd.tables("time_windows")) {
    TimeWindow tw = read_window(TomlReader(*w, "notify.time_windows[" + std::to_string(i++) + "]"));
    if (!ctx.windows.emplace(tw.name, tw).second) rd.fail("time_windows", "two windows named '" + tw.name + "'");
  }
  if (const toml::table* r = rd.table("retry")) c.retry = read_retry(TomlReader(*r, "notify.retry"), c.retry);
  i = 0;
  for (const toml::table* r : rd.tables("receivers")) {
    c.receivers.push_back(read_receiver(TomlReader(*r, "notify.receivers[" + std::to_string(i++) + "]"), c.retry));
    if (!ctx.receivers.insert(c.receivers.back().name).second) {
      rd.fail("receivers", "two receivers named '" + c.receivers.back().name + "'");
    }
  }
  if (c.receivers.empty()) rd.fail("receivers", "[notify] needs at least one [[notify.receivers]]");
  const toml::table* route = rd.table("route");
  if (!route) rd.fail("route", "[notify] needs a [notify.route] (the root of the routing tree)");
  c.route = read_route(TomlReader(*route, "notify.route"), Route{.group_by = {"market", "type"}}, "root", ctx, true);
  i = 0;
  for (const toml::table* r : rd.tables("inhibit_rules")) {
    c.inhibit_rules.push_back(read_inhibit(TomlReader(*r, "notify.inhibit_rules[" + std::to_string(i++) + "]")));
  }
  rd.finish();
  return c;
}

}  // namespace ts::notify
