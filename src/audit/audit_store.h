#pragma once
// The audit trail: every alert in SQLite (WAL mode, synchronous=NORMAL), one row per alert.
//
// Table `alerts`: row_id (INTEGER PRIMARY KEY), alert_id, symbol_id, symbol, type, severity,
// exch_ts_ns, event_seq, price_ticks, price (currency), recv_ns, book_ns, features_ns,
// detect_ns, emit_ns (monotonic ns), latency_ns (detect − recv), values_json
// ([{name,value,threshold,cmp}]), features_json ({name: value}), features_blob (the row as
// kFeatureCount little-endian float32, exact), written_at_ns (wall clock at insert), book_json
// (the top 5 levels of each side when the alert was raised: {"bids": [{price_ticks, price_text,
// size, size_text}], "asks": [...]}, best first; '' in rows written before it existed — a store
// made before the column is migrated on open with ALTER TABLE ADD COLUMN, its old rows readable).
//
// Writes are batched: write() inserts inside an open transaction (begun on the first write
// after a commit); flush() commits it. The AlertDispatcher flushes at least every 100 ms or
// 1000 alerts. Every SQLite call is checked; an error becomes a Status naming the call and
// SQLite's message. Threading: one thread at a time (SQLite connection rules); a second
// AuditStore on the same file (e.g. a reader) is fine in WAL mode.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sqlite_db.h"
#include "detect/alert_sink.h"

namespace ts {

struct AlertValueRecord {
  std::string name;
  double value = 0;
  double threshold = 0;
  std::string cmp;  // ">=", "<=", ">", "<", "info"
};

// One level of the book around an alert, as stored: exact decimals in the instrument's precision
// (price_text from the tick, size_text from the size increment) beside the integers.
struct BookLevelRecord {
  int64_t price_ticks = 0;
  std::string price_text;  // "1850.12"
  int64_t size = 0;        // size units (shares, or the instrument's size increments)
  std::string size_text;   // "300", "0.00005000"
};

// The top levels of both sides when the alert was raised (detect/alert.h AlertBook); present is
// false for alerts stored before the book was kept (an empty book_json column).
struct BookRecord {
  bool present = false;
  std::vector<BookLevelRecord> bids, asks;  // best first
};

// The model's score of a model alert (column model_json): present is false for rule alerts and
// for alerts stored before the score was kept (an empty column).
struct ModelScoreRecord {
  bool present = false;
  std::string name;
  uint32_t version = 0;
  double probability = 0;
  double threshold = 0;
  bool shadow = false;
};

// An alert as stored (strings instead of ids and literals).
struct AlertRecord {
  int64_t row_id = 0;
  uint64_t alert_id = 0;
  SymbolId symbol_id = kInvalidSymbol;
  std::string symbol;
  std::string type;
  std::string severity;
  int64_t exch_ts_ns = 0;
  uint64_t event_seq = 0;
  Price price_ticks = 0;
  double price = 0;
  StageTimes t;
  int64_t latency_ns = -1;
  std::vector<AlertValueRecord> values;
  std::vector<float> features;  // kFeatureCount floats, FeatureId order
  BookRecord book;              // the book around it (column book_json)
  ModelScoreRecord model;       // model alerts: name, version, probability, threshold (column model_json)
};

// The window a model alert was scored on (table `model_inputs`, one row per model alert).
struct ModelInputRecord {
  uint64_t alert_id = 0;
  std::string model;
  uint32_t version = 0;
  double probability = 0;
  double threshold = 0;
  bool shadow = false;
  int rows = 0, cols = 0;
  std::vector<float> window;  // rows × cols, oldest row first
};

// A notification's delivery (table `notify_deliveries`, one row per outbox notification; written
// by the notifier's delivery audit, src/notify/delivery_audit.h). The outbox stays the source of
// truth; this is the record an operator queries (`ticksentry audit deliveries`).
struct DeliveryAuditRecord {
  std::string outbox_uid;       // the outbox the id belongs to (random, made with the outbox)
  int64_t notification_id = 0;  // the outbox row id
  std::string receiver;
  std::string group_key;
  std::string status;  // "firing" / "resolved"
  std::vector<uint64_t> alert_ids;
  std::string state;  // "pending", "delivered", "failed" (given up for good)
  int attempts = 0;
  int64_t enqueued_unix_ns = 0;   // first enqueue
  int64_t alert_unix_ns = 0;      // the news in it (what alert → delivered counts from)
  int64_t delivered_unix_ns = 0;  // 0 unless delivered
  int64_t latency_ns = -1;        // first enqueue → delivered; -1 unless delivered
  int64_t alert_latency_ns = -1;  // alert → delivered; -1 unless delivered
  std::string last_error;
  int64_t updated_unix_ns = 0;
};

struct DeliveryQuery {
  std::optional<std::string> receiver;
  std::optional<std::string> state;
  int limit = 100;  // newest first
};

struct AlertQuery {
  std::optional<std::string> symbol;
  std::optional<std::string> type;
  int64_t since_exch_ns = INT64_MIN;  // inclusive
  int64_t until_exch_ns = INT64_MAX;  // exclusive
  int limit = 1000;                   // newest first
  std::optional<uint64_t> alert_id;   // only this alert (`ticksentry explain`)
};

class AuditStore : public AlertSink {
 public:
  // Opens (creating if needed) the database at `path` and its schema.
  static Result<std::unique_ptr<AuditStore>> open(const std::string& path);
  ~AuditStore() override;
  AuditStore(const AuditStore&) = delete;
  AuditStore& operator=(const AuditStore&) = delete;

  Status write(const Alert& a, const SymbolTable& symbols) override;
  // Table `model_inputs`: alert_id, model, version, probability, threshold, shadow, rows, cols,
  // window_blob (rows × cols little-endian float32), in the same transaction as the alert.
  Status write_model_input(const Alert& a, const float* window, int rows, int cols) override;
  Result<std::vector<ModelInputRecord>> model_inputs();  // oldest first
  Result<std::optional<ModelInputRecord>> model_input(uint64_t alert_id);
  bool records_shadow() const override { return true; }
  // Upserts a delivery row by (outbox_uid, notification_id) in the open batch (flush() commits).
  // A row never goes back: an update with fewer attempts than stored, or "pending" over a final
  // state, is ignored, so writes may arrive out of order and twice. An empty last_error keeps
  // the stored one (a delivery after failed attempts keeps the last failure's message).
  Status write_delivery(const DeliveryAuditRecord& r);
  Result<std::vector<DeliveryAuditRecord>> deliveries(const DeliveryQuery& q);
  // The lowest notification id of `outbox_uid` that may still change: its lowest pending row, or
  // one past its highest row (1 when it has none).
  Result<int64_t> delivery_resume_id(const std::string& outbox_uid);
  Status flush() override;  // commits the open batch, if any
  Status close() override;  // commits, finalizes statements, closes the connection

  Result<int64_t> count();
  Result<std::vector<AlertRecord>> load_all();  // oldest first
  Result<std::vector<AlertRecord>> query(const AlertQuery& q);
  Result<std::string> journal_mode();           // "wal"
  int64_t pending() const { return pending_; }  // rows written since the last commit

 private:
  explicit AuditStore(std::unique_ptr<SqlDb> db) : db_(std::move(db)) {}
  Status begin_batch();  // BEGIN unless a batch is open
  Result<std::vector<AlertRecord>> read_rows(SqlStmt& stmt);
  Result<std::vector<ModelInputRecord>> model_inputs(int64_t only_id);  // -1: all

  std::unique_ptr<SqlDb> db_;  // null once closed (declared first: outlives the statements)
  std::optional<SqlStmt> insert_, insert_input_, upsert_delivery_;
  bool in_txn_ = false;
  int64_t pending_ = 0;
};

}  // namespace ts
