#include "ingest/csv_writer.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "core/instrument.h"
#include "ingest/csv_format.h"

namespace ts {

namespace {

constexpr size_t kFlushBytes = 1 << 20;

template <typename T>
void put_num(std::string& out, T v) {
  char tmp[32];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);  // shortest exact form for double
  out.append(tmp, r.ptr);
}

void put_common(std::string& out, const Event& e, const std::string& name) {
  out += event_kind_name(e.kind);
  out += ',';
  out += name;
  out += ',';
  put_num(out, e.exch_ts_ns);
  out += ',';
  put_num(out, e.seq);
}

// True when a reader with no reference would give the symbol these units anyway: those its name
// implies (core/instrument.h), or RefData's 0.01 / 1 for a name no rule knows (a bare "GOOG").
// Such symbols need no units line, so equity files stay as they were.
bool units_are_name_defaults(const RefData& ref) {
  auto implied = instrument_from_symbol(ref.name);
  const RefData plain;
  const Decimal tick = implied.is_ok() ? implied.value().tick_size : plain.tick;
  const Decimal size = implied.is_ok() ? implied.value().size_increment : plain.size_increment;
  return ref.tick == tick && ref.size_increment == size;
}

}  // namespace

Result<CsvWriter> CsvWriter::open(const std::string& path) {
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  void* gzh = nullptr;
  void* fh = nullptr;
  if (gz) {
    gzh = gzopen(path.c_str(), "wb6");
  } else {
    fh = std::fopen(path.c_str(), "wb");
  }
  if (gzh == nullptr && fh == nullptr) {
    return Status(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  }
  CsvWriter w(path, gzh, fh);
  w.buf_.append(ingest::kCsvHeader);
  w.buf_ += '\n';
  return w;
}

CsvWriter::CsvWriter(std::string path, void* gz, void* file) : path_(std::move(path)), gz_(gz), file_(file) {
  buf_.reserve(kFlushBytes + 4096);
}

CsvWriter::CsvWriter(CsvWriter&& o) noexcept
    : path_(std::move(o.path_)),
      gz_(o.gz_),
      file_(o.file_),
      buf_(std::move(o.buf_)),
      events_(o.events_),
      units_written_(std::move(o.units_written_)) {
  o.gz_ = nullptr;
  o.file_ = nullptr;
}

CsvWriter& CsvWriter::operator=(CsvWriter&& o) noexcept {
  if (this != &o) {
    (void)close();
    path_ = std::move(o.path_);
    gz_ = o.gz_;
    file_ = o.file_;
    buf_ = std::move(o.buf_);
    events_ = o.events_;
    units_written_ = std::move(o.units_written_);
    o.gz_ = nullptr;
    o.file_ = nullptr;
  }
  return *this;
}

CsvWriter::~CsvWriter() { (void)close(); }

Status CsvWriter::flush() {
  if (buf_.empty()) return Status::ok();
  bool ok = true;
  if (gz_ != nullptr) {
    ok = gzwrite(static_cast<gzFile>(gz_), buf_.data(), static_cast<unsigned>(buf_.size())) ==
         static_cast<int>(buf_.size());
  } else if (file_ != nullptr) {
    ok = std::fwrite(buf_.data(), 1, buf_.size(), static_cast<FILE*>(file_)) == buf_.size();
  }
  buf_.clear();
  return ok ? Status::ok() : Status(StatusCode::kIoError, "writing " + path_ + " failed");
}

Status CsvWriter::write(const Event& e, const SymbolTable& symbols) {
  if (gz_ == nullptr && file_ == nullptr) return Status(StatusCode::kInvalidArgument, "writer is closed");
  if (e.symbol >= symbols.size()) {
    return Status(StatusCode::kInvalidArgument, "event for unknown symbol id " + std::to_string(e.symbol));
  }
  const std::string& name = symbols.name(e.symbol);
  if (!ingest::valid_symbol_name(name)) {
    return Status(StatusCode::kInvalidArgument, "symbol name not representable in csv: \"" + name + "\"");
  }
  std::string& o = buf_;
  if (e.symbol >= units_written_.size()) units_written_.resize(size_t(e.symbol) + 1, false);
  if (!units_written_[e.symbol]) {
    units_written_[e.symbol] = true;
    const RefData& ref = symbols.ref(e.symbol);
    if (!units_are_name_defaults(ref)) {
      o += ingest::kCsvUnitsKind;
      o += ',';
      o += name;
      o += ',';
      o += ref.tick.to_string();
      o += ',';
      o += ref.size_increment.to_string();
      o += '\n';
    }
  }
  put_common(o, e, name);
  switch (e.kind) {
    case EventKind::kSnapshot: {
      const SnapshotBody& s = e.snapshot;
      o += ',';
      o += phase_name(s.phase);
      for (auto v : {s.last, s.prev_close, s.cum_volume}) {
        o += ',';
        put_num(o, v);
      }
      o += ',';
      put_num(o, s.cum_turnover);
      for (const Level* side : {s.bids, s.asks}) {
        for (int i = 0; i < kBookLevels; ++i) {
          o += ',';
          put_num(o, side[i].price);
          o += ',';
          put_num(o, side[i].qty);
        }
      }
      o += s.resync ? ",1" : ",0";
      break;
    }
    case EventKind::kTrade:
      o += ',';
      put_num(o, e.trade.price);
      o += ',';
      put_num(o, e.trade.qty);
      o += ',';
      o += ingest::side_letter(e.trade.aggressor);
      o += ',';
      put_num(o, e.trade.buy_order_id);
      o += ',';
      put_num(o, e.trade.sell_order_id);
      break;
    case EventKind::kOrderAdd:
    case EventKind::kOrderCancel:
    case EventKind::kOrderExecute:
      o += ',';
      put_num(o, e.order.order_id);
      o += ',';
      put_num(o, e.order.price);
      o += ',';
      put_num(o, e.order.qty);
      o += ',';
      o += ingest::side_letter(e.order.side);
      break;
    case EventKind::kStatus:
      o += ',';
      o += phase_name(e.status.phase);
      break;
  }
  o += '\n';
  ++events_;
  if (buf_.size() >= kFlushBytes) return flush();
  return Status::ok();
}

Status CsvWriter::close() {
  if (gz_ == nullptr && file_ == nullptr) return Status::ok();
  Status st = flush();
  if (gz_ != nullptr) {
    if (gzclose(static_cast<gzFile>(gz_)) != Z_OK && st.is_ok()) st = Status(StatusCode::kIoError, "closing " + path_);
    gz_ = nullptr;
  }
  if (file_ != nullptr) {
    if (std::fclose(static_cast<FILE*>(file_)) != 0 && st.is_ok()) st = Status(StatusCode::kIoError, "closing " + path_);
    file_ = nullptr;
  }
  return st;
}

}  // namespace ts
