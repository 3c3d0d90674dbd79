#include "ingest/szse_trade_source.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "core/clock.h"
#include "core/log.h"
#include "ingest/flow_records.h"
#include "ingest/vendor_csv.h"

namespace ts {

using ingest::FieldError;
using ingest::FlowRecord;
using ingest::Line;
using ingest::LineReader;

namespace {

constexpr double kTicksPerYuan = 100.0;
constexpr int64_t kContinuousFromNs = (9 * 3600 + 30 * 60) * kNsPerSec;    // 09:30 local
constexpr int64_t kClosingCallFromNs = (14 * 3600 + 57 * 60) * kNsPerSec;  // 14:57 local

enum Col : size_t { kChannel, kSeq, kBidSeq, kOfferSeq, kSecurity, kPrice, kQty, kExecType, kTime, kBsFlag, kMarket };

const std::vector<std::string_view>& column_names() {
  static const std::vector<std::string_view> names = {"ChannelNo", "ApplSeqNum", "BidApplSeqNum", "OfferApplSeqNum",
                                                      "SecurityID", "TradePrice", "TradeQty",      "ExecType",
                                                      "TradeTime",  "TradeBSFlag", "Market"};
  return names;
}

struct CancelCount {
  uint64_t buy = 0, sell = 0;
  Qty buy_qty = 0, sell_qty = 0;
};

class SzseTradeReader : ingest::RowDecoder {
 public:
  SzseTradeReader(LineReader& lines, SymbolTable& symbols, InputErrors& errors, const ingest::HeaderColumns& h)
      : RowDecoder(symbols, errors) {
    start_file(lines, h);
  }

  std::vector<FlowRecord> read_all() {
    std::vector<FlowRecord> recs;
    ingest::for_each_row(*lines_, errors_, h_->ncols, [&](const Line& line, std::span<const std::string_view> f) {
      fields_ = f;
      FlowRecord r;
      if (decode(line, r)) recs.push_back(r);
    });
    const std::string files[] = {lines_->path()};
    ingest::order_flow(recs, files, errors_);
    return recs;
  }
  const std::map<SymbolId, CancelCount>& cancels() const { return cancels_; }

 private:
  // An order number column: empty or 0 → 0 (not set).
  bool order_no(const Line& line, size_t col, uint64_t& out) {
    out = 0;
    if (field(col).empty()) return true;
    const FieldError e = ingest::parse_u64(field(col), out);
    return e == FieldError::kOk || fail(line, e, col == kBidSeq ? "bad BidApplSeqNum" : "bad OfferApplSeqNum");
  }

  bool symbol(const Line& line, SymbolId& id) {
    const std::string_view code = field(kSecurity), market = field(kMarket);
    if (market != "SZ" && market != "SH") return fail(line, InputError::kUnknownSymbol, "Market not SZ/SH");
    if (code.size() != 6 || code.find_first_not_of("0123456789") != std::string_view::npos) {
      return fail(line, InputError::kUnknownSymbol, "SecurityID is not a six-digit code");
    }
    char name[9];
    std::memcpy(name, code.data(), 6);
    name[6] = '.';
    std::memcpy(name + 7, market.data(), 2);
    return intern(line, std::string_view(name, 9), id);
  }

  bool decode(const Line& line, FlowRecord& r) {
    SymbolId id = 0;
    if (!symbol(line, id)) return false;
    const std::string_view t = field(kTime);
    const size_t sep = std::min(t.find('T'), t.size());
    int64_t ts = 0;
    if (!china_time(line, t.substr(0, sep), t.substr(std::min(sep + 1, t.size())),
                    "bad TradeTime (YYYY.MM.DDTHH:MM:SS.fff)", ts)) {
      return false;
    }
    const int64_t tod = (ts + 8 * 3600 * kNsPerSec) % (86400 * kNsPerSec);  // China local time of day
    uint64_t channel = 0, bid = 0, offer = 0;
    FieldError e;
    if ((e = ingest::parse_u64(field(kChannel), channel)) != FieldError::kOk || channel > 0xffff) {
      return fail(line, e == FieldError::kOk ? InputError::kMalformedLine : ingest::input_error_for(e), "bad ChannelNo");
    }
    if ((e = ingest::parse_u64(field(kSeq), r.seq)) != FieldError::kOk) return fail(line, e, "bad ApplSeqNum");
    if (!order_no(line, kBidSeq, bid) || !order_no(line, kOfferSeq, offer)) return false;
    if ((e = yuan_ticks_.parse(field(kPrice), r.price)) != FieldError::kOk) {
      return fail(line, e, "bad TradePrice");
    }
    if ((e = ingest::parse_i64(field(kQty), r.qty)) != FieldError::kOk) return fail(line, e, "bad TradeQty");
    if (r.qty <= 0) return fail(line, InputError::kBadSize, "TradeQty <= 0");
    const std::string_view exec = field(kExecType);
    const bool sz = field(kMarket) == "SZ";
    if (exec == "4") {
      // A cancel: price 0, the cancelled order on exactly one side.
      if (r.price != 0) return fail(line, InputError::kBadPrice, "cancel with a price (ExecType 4 has price 0)");
      if ((bid == 0) == (offer == 0)) return fail(line, InputError::kUnknownOrder, "cancel must name exactly one order");
      CancelCount& c = cancels_[id];
      (bid != 0 ? c.buy : c.sell) += 1;
      (bid != 0 ? c.buy_qty : c.sell_qty) += r.qty;
      return false;  // counted as order flow, not emitted (no book without the order file)
    }
    if (!(exec == "F" || (exec.empty() && !sz))) return fail(line, InputError::kMalformedLine, "ExecType not F/4");
    if (r.price <= 0) return fail(line, InputError::kBadPrice, "TradePrice <= 0");
    if (sz && (bid == 0 || offer == 0)) return fail(line, InputError::kUnknownOrder, "fill without both orders");
    Side aggressor = Side::kNone;
    if (sz) {
      if (tod >= kContinuousFromNs && tod < kClosingCallFromNs) aggressor = bid > offer ? Side::kBuy : Side::kSell;
    } else {
      const std::string_view flag = field(kBsFlag);
      if (flag == "B") aggressor = Side::kBuy;
      else if (flag == "S") aggressor = Side::kSell;
      else if (flag != "N") return fail(line, InputError::kMalformedLine, "TradeBSFlag not B/S/N");
    }
    r.exch_ts_ns = ts;
    r.id_a = bid;
    r.id_b = offer;
    r.symbol = id;
    r.line = uint32_t(line.number);
    r.channel = uint16_t(channel);
    r.kind = EventKind::kTrade;
    r.side = aggressor;
    return true;
  }

  const ingest::DecimalTicks yuan_ticks_{kTicksPerYuan};  // parse_price_ticks' results, in integers
  std::map<SymbolId, CancelCount> cancels_;
};

}  // namespace

Result<std::unique_ptr<Source>> make_szse_trade_source(const std::string& path, SymbolTable& symbols,
                                                       InputErrors& errors, SzseTradeCounts* counts) {
  const std::string ctx = "opening SZSE trade stream " + path;
  std::error_code ec;
  std::string file = path;
  if (std::filesystem::is_directory(path, ec)) {
    file = ingest::find_data_file(path, {"tradeData", "trade"});
    if (file.empty()) return Status(StatusCode::kNotFound, "no tradeData.csv(.gz) in " + path).with_context(ctx);
  }
  auto lines = LineReader::open(file, errors);
  if (!lines) return lines.status().with_context(ctx);
  return make_szse_trade_source_from_reader(std::move(lines).value(), symbols, errors, counts);
}

Result<std::unique_ptr<Source>> make_szse_trade_source_from_reader(std::unique_ptr<LineReader> lines, SymbolTable& symbols,
                                                       InputErrors& errors, SzseTradeCounts* counts) {
  const std::string file = lines->path();
  auto header = ingest::read_header_columns(*lines, column_names());
  if (!header) return header.status().with_context("opening SZSE trade stream " + file);
  spdlog::info("szse-trades: found {} (trades and cancels), no order file: trades alone, cancels counted as "
               "order flow (no book rebuilt from orders)",
               std::string(ingest::base_name(file)));
  SzseTradeReader reader(*lines, symbols, errors, header.value());
  std::vector<FlowRecord> recs = reader.read_all();
  if (counts) *counts = SzseTradeCounts{};
  for (const auto& [id, c] : reader.cancels()) {
    if (counts) counts->cancels += c.buy + c.sell, counts->cancel_qty += c.buy_qty + c.sell_qty;
    spdlog::info("szse-trades: {}: {} cancels ({} buy orders, {} shares; {} sell orders, {} shares)", symbols.name(id),
                 c.buy + c.sell, c.buy, c.buy_qty, c.sell, c.sell_qty);
  }
  if (counts) counts->trades = recs.size();
  return std::unique_ptr<Source>(
      std::make_unique<ingest::RecordSource<FlowRecord>>(std::move(recs), "szse-trades " + file + " (trades alone)"));
}

}  // namespace ts
