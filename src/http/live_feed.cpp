#include "http/live_feed.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "audit/alert_format.h"
#include "core/clock.h"
#include "core/instrument.h"

namespace ts::http {

namespace {
// The price as the double nearest to its exact decimal in the tick's precision (58.3, never
// 58.300000000000004): the dashboard shows what every other output shows.
double ticks_to_price(Price p, double tick) { return std::strtod(format_price(p, tick).c_str(), nullptr); }

nlohmann::json quantiles_us(const LatencyHistogram& h) {
  return {{"p50", double(h.quantile_ns(0.50)) / 1e3},
          {"p99", double(h.quantile_ns(0.99)) / 1e3},
          {"p999", double(h.quantile_ns(0.999)) / 1e3},
          {"count", h.count()}};
}
// What a trader reads beside the price: previous close and change, phase, units, zone, limits.
nlohmann::json market_json(const RefData& ref, const QuoteSnapshot& q) {
  const Price prev = q.prev_close > 0 ? q.prev_close : ref.prev_close;
  const double tick = ref.tick_size;
  const Price last = q.last ? q.last : (q.bid_levels && q.ask_levels ? (q.bids[0].price + q.asks[0].price) / 2 : 0);
  std::string zone = ref.instrument ? ref.instrument->time_zone : std::string();
  if (zone.empty()) {
    zone = ref.market == Market::kUs ? "America/New_York"
           : ref.market == Market::kUnknown ? "UTC" : "Asia/Shanghai";
  }
  nlohmann::json m = {{"exch_ts_ns", std::to_string(q.update_ts_ns)},
                      {"phase", phase_name(q.phase)},
                      {"prev_close", prev > 0 ? ticks_to_price(prev, tick) : 0.0},
                      {"change_pct", nullptr},
                      {"currency", ref.instrument ? ref.instrument->currency
                                   : ref.market == Market::kUs ? "USD"
                                   : ref.market == Market::kUnknown ? "" : "CNY"},
                      {"lot_size", ref.lot_size},
                      {"price_decimals", ref.tick.scale},
                      {"time_zone", zone},
                      {"utc_offset_s", q.local_offset_s},
                      {"limit_up", ref.limit_up > 0 ? ticks_to_price(ref.limit_up, tick) : 0.0},
                      {"limit_down", ref.limit_down > 0 ? ticks_to_price(ref.limit_down, tick) : 0.0}};
  if (prev > 0 && last > 0) m["change_pct"] = std::round(1e4 * double(last - prev) / double(prev)) / 100;
  return m;
}
// The instrument's name from the reference file's `name` column ("" where it gives none).
std::string instrument_name(const RefData& ref) { return ref.instrument ? ref.instrument->name : std::string(); }
}  // namespace

LiveFeed::LiveFeed(const SymbolTable& symbols, MarketBoard* board, AlertStream* alerts, EventHub& hub,
                   Metrics& metrics, LiveFeedOptions options)
    : symbols_(symbols), board_(board), alerts_(alerts), hub_(hub), metrics_(metrics), options_(options) {}

LiveFeed::~LiveFeed() { stop(); }

void LiveFeed::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void LiveFeed::stop() {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    stopping_ = true;
  }
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LiveFeed::run() {
  std::unique_lock<std::mutex> lock(run_mu_);
  while (!stopping_) {
    run_cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms), [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    tick();
    lock.lock();
  }
}

double LiveFeed::total_counter(const std::string& family) const {
  double sum = 0;
  for (const auto& fam : metrics_.registry().Collect()) {
    if (fam.name != family) continue;
    for (const auto& m : fam.metric) sum += m.counter.value;
  }
  return sum;
}

void LiveFeed::tick() {
  const int64_t now_ns = mono_ns();
  const double t_s = double(wall_ns() / 1'000'000) / 1e3;
  nlohmann::json ticks = nlohmann::json::array();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = board_ ? std::min(symbols_.size(), board_->capacity()) : 0;
    if (views_.size() < n) views_.resize(n);
    for (SymbolId id = 0; id < n; ++id) {
      SymbolView& v = views_[id];
      QuoteSnapshot q;
      if (!board_->read(id, &q) || q.version == v.version) continue;
      const std::string& name = symbols_.name(id);
      if (v.version == 0) ids_.emplace(name, id);
      v.version = q.version;
      v.quote = q;
      const double tick = symbols_.ref(id).tick_size;
      const double t_exch = q.update_ts_ns > 0 ? double(q.update_ts_ns / 1'000'000) / 1e3 : t_s;
      const double price = q.last ? ticks_to_price(q.last, tick)
                                  : (q.bid_levels && q.ask_levels ? 0.5 * ticks_to_price(q.bids[0].price + q.asks[0].price, tick) : 0.0);
      if (!v.history.empty() && v.history.back()[0] >= t_exch) v.history.pop_back();  // time only forward
      v.history.push_back({t_exch, price, double(q.cum_volume)});
      while (v.history.size() > options_.history_points) v.history.pop_front();
      if (!v.minutes.empty() && std::floor(v.minutes.back()[0] / 60) >= std::floor(t_exch / 60)) v.minutes.pop_back();
      v.minutes.push_back({t_exch, price, double(q.cum_volume)});
      while (v.minutes.size() > options_.minute_points) v.minutes.pop_front();
      ticks.push_back({{"s", name}, {"p", price}, {"v", q.cum_volume},
                       {"b", q.bid_levels ? ticks_to_price(q.bids[0].price, tick) : 0.0},
                       {"a", q.ask_levels ? ticks_to_price(q.asks[0].price, tick) : 0.0},
                       {"t", t_exch}});
    }
  }
  if (!ticks.empty()) hub_.publish("ticks", ticks.dump());

  // Model probabilities: each scored symbol's peak since the previous tick.
  if (scores_) {
    nlohmann::json scored = nlohmann::json::array();
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = std::min(symbols_.size(), scores_->capacity());
    if (views_.size() < n) views_.resize(n);
    for (SymbolId id = 0; id < n; ++id) {
      float peak = 0;
      if (!scores_->take_peak(id, &peak)) continue;
      SymbolView& v = views_[id];
      const std::string& name = symbols_.name(id);
      ids_.emplace(name, id);
      // On the symbol's exchange clock, like its ticks (the wall clock before its first quote).
      const double t_exch = v.quote.update_ts_ns > 0 ? double(v.quote.update_ts_ns / 1'000'000) / 1e3 : t_s;
      if (!v.scores.empty() && v.scores.back()[0] >= t_exch) v.scores.pop_back();
      v.scores.push_back({t_exch, double(peak)});
      while (v.scores.size() > options_.history_points) v.scores.pop_front();
      scored.push_back({{"s", name}, {"m", peak}, {"t", t_exch}});
    }
    if (!scored.empty()) hub_.publish("scores", scored.dump());
  }

  // Stats: rates over the time since the previous tick.
  const double events = total_counter("ticksentry_events_total");
  LatencyWindow w = alerts_ ? alerts_->take_window() : LatencyWindow();
  nlohmann::json stats;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double dt_s = last_tick_ns_ ? double(now_ns - last_tick_ns_) / 1e9 : double(options_.interval_ms) / 1e3;
    last_tick_ns_ = now_ns;
    events_seen_.emplace_back(now_ns, events);
    while (events_seen_.size() > 6) events_seen_.pop_front();
    const auto& [first_ns, first_events] = events_seen_.front();
    const double span_s = double(now_ns - first_ns) / 1e9;
    const double alerts_total = last_alerts_ + double(w.alerts);
    stats = {{"t", t_s},
             {"events_per_s", span_s > 0 ? std::max(0.0, events - first_events) / span_s : 0.0},
             {"alerts_per_s", dt_s > 0 ? double(w.alerts) / dt_s : 0.0},
             {"alerts_silenced", w.silenced},
             {"events_total", events},
             {"alerts_total", alerts_total}};
    last_alerts_ = alerts_total;
    nlohmann::json lat = nlohmann::json::object();
    for (int s = 0; s < kLatencyStageCount; ++s) lat[latency_stage_name(static_cast<LatencyStage>(s))] = quantiles_us(w.stage[s]);
    stats["latency_us"] = lat;
    if (nlohmann::json model = serving_.sample(dt_s); !model.is_null()) stats["model"] = std::move(model);
    stats_.push_back(stats.dump());
    while (stats_.size() > options_.stats_points) stats_.pop_front();
  }
  hub_.publish("stats", stats.dump());
  if (on_tick_) on_tick_();
  ticks_.fetch_add(1, std::memory_order_relaxed);
}

std::string LiveFeed::symbols_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, SymbolId>> sorted(ids_.begin(), ids_.end());
  std::sort(sorted.begin(), sorted.end());
  nlohmann::json list = nlohmann::json::array();
  for (auto& [name, id] : sorted) {
    const QuoteSnapshot& q = views_[id].quote;
    const double tick = symbols_.ref(id).tick_size;
    list.push_back({{"s", name},
                    {"name", instrument_name(symbols_.ref(id))},
                    {"p", views_[id].history.empty() ? 0.0 : views_[id].history.back()[1]},
                    {"v", q.cum_volume},
                    {"b", q.bid_levels ? ticks_to_price(q.bids[0].price, tick) : 0.0},
                    {"a", q.ask_levels ? ticks_to_price(q.asks[0].price, tick) : 0.0},
                    {"market", market_json(symbols_.ref(id), q)}});
  }
  return nlohmann::json{{"symbols", list}}.dump();
}

std::string LiveFeed::symbol_json(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(name);
  if (it == ids_.end()) return {};
  const SymbolView& v = views_[it->second];
  const double tick = symbols_.ref(it->second).tick_size;
  nlohmann::json bids = nlohmann::json::array(), asks = nlohmann::json::array(), hist = nlohmann::json::array();
  for (int i = 0; i < v.quote.bid_levels; ++i) bids.push_back({ticks_to_price(v.quote.bids[i].price, tick), v.quote.bids[i].qty});
  for (int i = 0; i < v.quote.ask_levels; ++i) asks.push_back({ticks_to_price(v.quote.asks[i].price, tick), v.quote.asks[i].qty});
  for (const auto& p : v.history) hist.push_back({p[0], p[1], p[2]});
  nlohmann::json prob = nlohmann::json::array();
  for (const auto& p : v.scores) prob.push_back({p[0], p[1]});
  return nlohmann::json{{"symbol", name},
                        {"name", instrument_name(symbols_.ref(it->second))},
                        {"market", market_json(symbols_.ref(it->second), v.quote)},
                        {"tick_size", tick},
                        {"last", ticks_to_price(v.quote.last, tick)},
                        {"volume", v.quote.cum_volume},
                        {"bids", bids},
                        {"asks", asks},
                        {"history", hist},
                        {"probability", prob},
                        {"threshold", scores_ ? scores_->threshold(it->second) : 0.0}}
      .dump();
}

std::string LiveFeed::history_json(const std::string& name, int64_t from_ns, int64_t to_ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(name);
  if (it == ids_.end()) return {};
  const SymbolView& v = views_[it->second];
  const double from_s = double(from_ns / 1'000'000) / 1e3, to_s = double(to_ns / 1'000'000) / 1e3;
  const double fine_from = v.history.empty() ? 1e300 : v.history.front()[0];
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : v.minutes) {
    if (p[0] >= fine_from) break;
    if (p[0] >= from_s && p[0] <= to_s) points.push_back({p[0], p[1], p[2]});
  }
  for (const auto& p : v.history) {
    if (p[0] >= from_s && p[0] <= to_s) points.push_back({p[0], p[1], p[2]});
  }
  return nlohmann::json{{"symbol", name}, {"points", std::move(points)}}.dump();
}

std::string LiveFeed::stats_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "{\"points\":[";
  for (size_t i = 0; i < stats_.size(); ++i) {
    if (i) out += ',';
    out += stats_[i];
  }
  return out + "]}";
}

}  // namespace ts::http
