#pragma once
// Where alerts go once they leave the hot path: stdout, JSONL files, the SQLite audit store.
// Threading: a sink is driven by one thread at a time (the AlertDispatcher's sink thread);
// sinks may block (disk, fsync) — they never run on a shard thread.
#include "core/status.h"
#include "core/symbol_table.h"
#include "detect/alert.h"

namespace ts {

class AlertSink {
 public:
  virtual ~AlertSink() = default;
  // Writes one alert (may buffer). An error is returned, never thrown; the caller counts it
  // and carries on with the next alert.
  virtual Status write(const Alert& a, const SymbolTable& symbols) = 0;
  // Model alerts only, right after write(a): the window that fed the model, rows × cols floats
  // (oldest row first). Sinks that keep an audit trail store it; the default ignores it.
  virtual Status write_model_input(const Alert& a, const float* window, int rows, int cols) {
    (void)a, (void)window, (void)rows, (void)cols;
    return Status::ok();
  }
  // Makes everything written so far durable/visible (flushes a FILE, commits a transaction).
  virtual Status flush() = 0;
  // Whether the sink gets shadow-model alerts (Alert::model.shadow): recorded (audit trail,
  // JSONL), never sent (stdout, notifications, the alerts topic, the dashboard's live feed).
  virtual bool records_shadow() const { return false; }
  // Flushes and releases the sink's resources; write() after close() is an error.
  virtual Status close() { return flush(); }
};

}  // namespace ts
