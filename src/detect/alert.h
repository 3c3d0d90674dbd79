#pragma once
// An alert: what fired, on which symbol, with the values and thresholds that fired it, the
// event's timestamps and the time each stage stamped, and the feature row at that moment.
// Trivially copyable: alerts travel from shards to sinks through rings.
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "core/event.h"
#include "core/stage_times.h"
#include "features/feature_set.h"

namespace ts {

enum class AlertType : uint8_t {
  kRapidRise = 0,       // 快速拉升 / 火箭发射
  kAcceleratingDrop,    // 加速下跌
  kHighDive,            // 高台跳水: sharp drop from the day's high
  kLargeBuy,            // 大笔买入
  kLargeSell,           // 大笔卖出
  kLimitUpSealed,       // 封涨停
  kLimitUpOpened,       // 打开涨停
  kLimitDownSealed,     // 封跌停
  kLimitDownOpened,     // 打开跌停
  kLimitUpQueueShrink,  // 封单量骤减
  kSpreadWidening,
  kBookImbalance,
  kVolumeBurst,
  kLargeOrder,  // 大单挂单: a resting order far larger than the levels around it (spoofing, walls)
  kLimitUpTouched,    // 触及涨停: a trade at, or the best ask at, the limit-up price
  kLimitDownTouched,  // 触及跌停: a trade at, or the best bid at, the limit-down price
  kLimitDownQueueShrink,  // 跌停封单骤减: the sealed ask queue at limit-down shrinking fast
  kModel,       // a model's probability crossed its threshold (src/detect/model_decision.h)
  kCount
};
constexpr int kAlertTypeCount = static_cast<int>(AlertType::kCount);
// The rule detectors' types come first; per-rule tables (options, gates, exported rule columns)
// have kRuleTypeCount entries.
constexpr int kRuleTypeCount = static_cast<int>(AlertType::kModel);
const char* alert_type_name(AlertType type);  // "rapid_rise", ...

enum class Severity : uint8_t { kInfo = 0, kWarning, kCritical };
const char* severity_name(Severity s);

// How a value compared with its threshold when the rule fired ("ret_60s_bps=312.5 (>=200)").
// kInfo: context only (the threshold is not a condition).
enum class Cmp : uint8_t { kGe = 0, kLe, kGt, kLt, kInfo };
const char* cmp_symbol(Cmp c);  // ">=", "<=", ">", "<", ""

// One measured value against its threshold; `name` is a string literal ("ret_10s_bps").
struct AlertValue {
  const char* name = nullptr;
  double value = 0;
  double threshold = 0;
  Cmp cmp = Cmp::kGe;
};

// What a model alert adds: which model version scored the window and how. Rule alerts leave
// version at 0. The window that fed the model travels next to the alert (AlertDispatcher's
// window ring) to the audit store; it is not part of this struct (it is up to 9.6 KB).
struct ModelScore {
  static constexpr int kMaxName = 32;
  char model[kMaxName] = {};  // model name, NUL-terminated (truncated to 31 bytes)
  uint32_t version = 0;       // registry version; 0 = not a model alert
  float probability = 0;
  float threshold = 0;       // the decision threshold it crossed
  bool shadow = false;       // a shadow version's alert: recorded in the audit trail, not sent
  uint16_t window_rows = 0;  // rows of the window that fed it (0: none recorded)
};

// The book around an alert: the top kAlertBookLevels levels of each side (best first) as the
// shard's book held them when the alert was raised (rule alerts: right after the triggering
// event; model alerts: when the score came back). Levels past bid_levels / ask_levels are {0, 0}.
// Prices in ticks, sizes in the instrument's size units (the sinks write them as exact
// decimals, audit/alert_json.h).
constexpr int kAlertBookLevels = 5;
struct AlertBook {
  Level bids[kAlertBookLevels];
  Level asks[kAlertBookLevels];
  uint8_t bid_levels = 0;
  uint8_t ask_levels = 0;
};

struct Alert {
  static constexpr int kMaxValues = 4;
  uint64_t id = 0;  // alert_id(symbol name, type, exch_ts_ns, event_seq): deterministic, < 2^53
  AlertType type = AlertType::kRapidRise;
  Severity severity = Severity::kInfo;
  SymbolId symbol = kInvalidSymbol;
  int64_t exch_ts_ns = 0;  // exchange time of the triggering event
  uint64_t event_seq = 0;  // source sequence of the triggering event
  Price price = 0;         // last price (ticks) at the time
  int value_count = 0;
  AlertValue values[kMaxValues];
  StageTimes t;                        // when each stage finished with the triggering event
  float features[kFeatureCount] = {};  // the feature row that fired it
  ModelScore model;                    // model alerts only (type kModel)
  AlertBook book;                      // the book when it was raised (ShardWorker::emit)

  // Appends a value; silently ignores more than kMaxValues (rules never add more).
  void add_value(const char* name, double value, double threshold, Cmp cmp) {
    if (value_count < kMaxValues) values[value_count++] = AlertValue{name, value, threshold, cmp};
  }
};
static_assert(std::is_trivially_copyable_v<Alert>, "alerts travel through rings by memcpy");

// An alert's id: a 53-bit hash of the symbol's name, the alert type and the triggering event's
// exchange time and source sequence. The same input read twice (a restart that re-reads Kafka
// messages, a second instance taking over a partition) raises alerts with the same ids, so
// downstream stores and consumers dedupe by id (the audit store inserts an id once). Symbol
// names, not ids, go in: ids depend on the order a process first saw its symbols.
// Alert ids are 53-bit: a JSON number below 2^53 is exact in every parser (jq and JavaScript
// read numbers as doubles) and a positive INTEGER in SQLite and PostgreSQL, so the same id reads
// the same in every sink. 2^53 ids keep the chance of a collision among 10^6 alerts below 10^-4.
constexpr uint64_t kAlertIdMask = (uint64_t(1) << 53) - 1;
uint64_t alert_id(std::string_view symbol, AlertType type, int64_t exch_ts_ns, uint64_t event_seq);

}  // namespace ts
