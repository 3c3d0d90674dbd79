#include "ingest/sse_l3_source.h"

#include <filesystem>
#include <vector>

#include "core/log.h"
#include "ingest/flow_records.h"
#include "ingest/vendor_csv.h"

namespace ts {

using ingest::FieldError;
using ingest::FlowRecord;
using ingest::Line;
using ingest::LineReader;

namespace {

constexpr double kTicksPerYuan = 100.0;  // tick 0.01 CNY

// Columns common to both files first, then the file's own.
enum Col : size_t { kDate, kTime, kSecurity, kChannel, kSeq, kPrice, kQty, kFlag, kOwn1, kOwn2 };

const std::vector<std::string_view> kOrderColumns = {"MDDate",     "MDTime",     "SecurityID", "ChannelNo", "ApplSeqNum",
                                                     "OrderPrice", "OrderQty",   "OrderBSFlag", "OrderType", "OrderNO"};
const std::vector<std::string_view> kTradeColumns = {"MDDate",     "MDTime",   "SecurityID",  "ChannelNo",  "ApplSeqNum",
                                                     "TradePrice", "TradeQty", "TradeBSFlag", "TradeBuyNo", "TradeSellNo"};

class SseL3Reader : ingest::RowDecoder {
 public:
  using RowDecoder::RowDecoder;

  // Reads one file's rows into records_; `trades` picks the layout.
  void read(LineReader& lines, const ingest::HeaderColumns& h, bool trades) {
    start_file(lines, h);
    const auto file = uint8_t(files_.size());
    files_.push_back(lines.path());
    ingest::for_each_row(lines, errors_, h.ncols, [&](const Line& line, std::span<const std::string_view> f) {
      fields_ = f;
      FlowRecord r;
      if (trades ? decode_trade(line, r) : decode_order(line, r)) {
        r.file = file;
        records_.push_back(r);
      }
    });
  }

  std::vector<FlowRecord> finish() {
    ingest::order_flow(records_, files_, errors_);
    return std::move(records_);
  }

 private:
  // Symbol, time, channel, sequence, price and qty: the fields both layouts share.
  bool common(const Line& line, FlowRecord& r) {
    const std::string_view s = field(kSecurity);
    if (s.size() != 9 || s.substr(6) != ".SH" || s.substr(0, 6).find_first_not_of("0123456789") != std::string_view::npos) {
      return fail(line, InputError::kUnknownSymbol, "SecurityID is not NNNNNN.SH");
    }
    if (!intern(line, s, r.symbol) ||
        !china_time(line, field(kDate), field(kTime), "bad MDDate / MDTime", r.exch_ts_ns)) {
      return false;
    }
    uint64_t channel = 0;
    FieldError e;
    if ((e = ingest::parse_u64(field(kChannel), channel)) != FieldError::kOk) return fail(line, e, "bad ChannelNo");
    if (channel > 0xffff) return fail(line, InputError::kMalformedLine, "ChannelNo > 65535");
    if ((e = ingest::parse_u64(field(kSeq), r.seq)) != FieldError::kOk) return fail(line, e, "bad ApplSeqNum");
    if ((e = yuan_ticks_.parse(field(kPrice), r.price)) != FieldError::kOk) {
      return fail(line, e, "bad price");
    }
    if ((e = ingest::parse_i64(field(kQty), r.qty)) != FieldError::kOk) return fail(line, e, "bad qty");
    if (r.qty <= 0) return fail(line, InputError::kBadSize, "qty <= 0");
    r.channel = uint16_t(channel);
    r.line = uint32_t(line.number);
    return true;
  }

  bool decode_order(const Line& line, FlowRecord& r) {
    if (!common(line, r)) return false;
    const std::string_view type = field(kOwn1), flag = field(kFlag);
    const bool add = type == "2";
    if (!add && type != "10") return fail(line, InputError::kMalformedLine, "OrderType not 2 (add) / 10 (cancel)");
    if (flag != "1" && flag != "2") return fail(line, InputError::kMalformedLine, "OrderBSFlag not 1/2");
    // A new order needs a price to rest at; a cancel names the order, its price is informational.
    if (add ? r.price <= 0 : r.price < 0) return fail(line, InputError::kBadPrice, "OrderPrice out of range");
    const FieldError e = ingest::parse_u64(field(kOwn2), r.id_a);
    if (e != FieldError::kOk) return fail(line, e, "bad OrderNO");
    r.kind = add ? EventKind::kOrderAdd : EventKind::kOrderCancel;
    r.side = flag == "1" ? Side::kBuy : Side::kSell;
    return true;
  }

  bool decode_trade(const Line& line, FlowRecord& r) {
    if (!common(line, r)) return false;
    if (r.price <= 0) return fail(line, InputError::kBadPrice, "TradePrice <= 0");
    const std::string_view flag = field(kFlag);
    if (flag == "1") r.side = Side::kBuy;
    else if (flag == "2") r.side = Side::kSell;
    else if (flag == "0" || flag.empty()) r.side = Side::kNone;
    else return fail(line, InputError::kMalformedLine, "TradeBSFlag not 0/1/2");
    FieldError e;
    if ((e = ingest::parse_u64(field(kOwn1), r.id_a)) != FieldError::kOk) return fail(line, e, "bad TradeBuyNo");
    if ((e = ingest::parse_u64(field(kOwn2), r.id_b)) != FieldError::kOk) return fail(line, e, "bad TradeSellNo");
    r.kind = EventKind::kTrade;
    return true;
  }

  const ingest::DecimalTicks yuan_ticks_{kTicksPerYuan};  // parse_price_ticks' results, in integers
  std::vector<std::string> files_;
  std::vector<FlowRecord> records_;
};

}  // namespace

Result<std::unique_ptr<Source>> make_sse_l3_source(const std::string& day_dir, SymbolTable& symbols,
                                                   InputErrors& errors) {
  const std::string ctx = "opening SSE tick-by-tick day " + day_dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(day_dir, ec)) {
    return Status(StatusCode::kNotFound, "no such directory: " + day_dir).with_context(ctx);
  }
  std::unique_ptr<LineReader> readers[2];
  for (const bool trades : {false, true}) {
    const std::string path = trades ? ingest::find_data_file(day_dir, {"SHtrans", "trans"})
                                    : ingest::find_data_file(day_dir, {"SHorders", "orders"});
    if (path.empty()) {
      return Status(StatusCode::kNotFound,
                    std::string("missing ") + (trades ? "SHtrans" : "SHorders") + ".csv(.gz) in " + day_dir)
          .with_context(ctx);
    }
    auto lines = LineReader::open(path, errors);
    if (!lines) return lines.status().with_context(ctx);
    readers[trades] = std::move(lines).value();
  }
  return make_sse_l3_source_from_readers(std::move(readers[0]), std::move(readers[1]), day_dir, symbols, errors);
}

Result<std::unique_ptr<Source>> make_sse_l3_source_from_readers(std::unique_ptr<LineReader> orders,
                                                   std::unique_ptr<LineReader> trades, const std::string& day_name,
                                                   SymbolTable& symbols, InputErrors& errors) {
  const std::string ctx = "opening SSE tick-by-tick day " + day_name;
  SseL3Reader reader(symbols, errors);
  for (LineReader* lines : {orders.get(), trades.get()}) {
    const bool is_trades = lines == trades.get();
    auto header = ingest::read_header_columns(*lines, is_trades ? kTradeColumns : kOrderColumns);
    if (!header) return header.status().with_context(ctx);
    reader.read(*lines, header.value(), is_trades);
  }
  std::vector<FlowRecord> recs = reader.finish();
  spdlog::info("sse-l3 {}: found {} and {}: {} orders and trades, ApplSeqNum order within each security, time order across", day_name,
               orders->file_name(), trades->file_name(), recs.size());
  return std::unique_ptr<Source>(std::make_unique<ingest::RecordSource<FlowRecord>>(std::move(recs), "sse-l3 " + day_name));
}

}  // namespace ts
