#pragma once
// An alert as JSON (nlohmann; off the hot path). One schema for the JSONL sink, the audit
// store's JSON columns and, later, the admin API:
// Integers that can exceed 2^53 (nanosecond timestamps) are decimal strings, so jq and JavaScript,
// which read numbers as doubles, keep them exact; the id is a number below 2^53 (detect/alert.h).
// {
//   "id", "symbol", "symbol_id", "type", "severity", "exch_ts_ns" (string), "event_seq",
//   "price_ticks", "price",                       // price in currency = ticks * tick_size
//   "values": [{"name", "value", "threshold", "cmp"}],
//   "stage_ns": {"recv", "book", "features", "detect", "emit"},      // monotonic ns (strings)
//   "latency_ns": {"book", "features", "detect", "emit", "total"},   // each stage minus the one
//                                                                    // before; total = last stamped − recv
//   "features": {"ret_1s_bps": ..., ...}          // non-finite values are null
// }
#include <nlohmann/json.hpp>

#include "audit/audit_store.h"
#include "core/symbol_table.h"
#include "detect/alert.h"

namespace ts {

nlohmann::json alert_to_json(const Alert& a, const SymbolTable& symbols);
nlohmann::json alert_values_json(const Alert& a, const RefData* ref = nullptr);
nlohmann::json alert_features_json(const Alert& a);
// A stored alert (AlertRecord) in the same schema, with latency_ns holding only "total" beside the
// stage deltas; "model" ({"name", "version", "probability", "threshold", "shadow"}) where the store
// kept it (model alerts written since the stores kept model_json); the model's window is in
// model_inputs (SQLite only).
nlohmann::json alert_record_json(const AlertRecord& r);

// A model alert's score as the stores keep it (column model_json): {"name", "version",
// "probability", "threshold", "shadow"}; "" for a rule alert.
std::string alert_model_text(const Alert& a);
// A stored model_json text back into a record ('' or anything else: present = false).
ModelScoreRecord parse_model_json(const std::string& text);

// The book around an alert, as the stores keep it (column book_json) and /api/alerts/{id} and
// `explain --json` answer it: {"bids": [{"price_ticks", "price_text", "size", "size_text"}],
// "asks": [...]}, best first, exact decimals in the instrument's precision (`ref` null: prices
// at two decimals, sizes as integers).
nlohmann::json alert_book_json(const Alert& a, const RefData* ref);
// A stored book_json text back into a record; '' (rows written before the book was kept) or
// anything not in that form gives present = false.
BookRecord parse_book_json(const std::string& text);
// A record as that JSON; null when not present.
nlohmann::json book_record_json(const BookRecord& b);

}  // namespace ts
