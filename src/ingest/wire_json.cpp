#include "ingest/wire_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cstring>
#include <vector>

namespace ts {

namespace od = simdjson::ondemand;

// ---- encoding ----------------------------------------------------------------------------------

namespace {

char side_char(Side s) { return s == Side::kBuy ? 'B' : s == Side::kSell ? 'S' : 'N'; }

void append_levels(std::string& out, const char* name, const Level* levels) {
  out += ",\"";
  out += name;
  out += "\":[";
  // Levels by position up to the last non-empty one: empty levels after it are left out, an
  // empty level before it is written [0,0] so that the levels behind it keep their place (a
  // snapshot with a hole once came back with its deeper levels moved up one).
  int n = kBookLevels;
  while (n > 0 && levels[n - 1].price == 0 && levels[n - 1].qty == 0) --n;
  for (int i = 0; i < n; ++i) {
    fmt::format_to(std::back_inserter(out), "{}[{},{}]", i == 0 ? "" : ",", levels[i].price, levels[i].qty);
  }
  out += ']';
}

}  // namespace

void wire_json_append(const WireEvent& w, std::string& out) {
  const Event& e = w.event;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{\"v\":{},\"kind\":\"{}\",\"symbol\":\"{}\",\"seq\":{},\"exch_ts_ns\":{}", kWireVersion,
                 event_kind_name(e.kind), w.symbol, e.seq, e.exch_ts_ns);
  if (w.prev_close != 0 || w.is_st) {
    fmt::format_to(it, ",\"ref\":{{\"prev_close\":{},\"st\":{}}}", w.prev_close, w.is_st);
  }
  switch (e.kind) {
    case EventKind::kSnapshot: {
      const SnapshotBody& s = e.snapshot;
      fmt::format_to(it, ",\"phase\":\"{}\",\"last\":{},\"prev_close\":{},\"cum_volume\":{},\"cum_turnover\":{},\"resync\":{}",
                     phase_name(s.phase), s.last, s.prev_close, s.cum_volume, s.cum_turnover, int(s.resync));
      append_levels(out, "bids", s.bids);
      append_levels(out, "asks", s.asks);
      break;
    }
    case EventKind::kTrade:
      fmt::format_to(it, ",\"price\":{},\"qty\":{},\"aggressor\":\"{}\",\"buy_order_id\":{},\"sell_order_id\":{}",
                     e.trade.price, e.trade.qty, side_char(e.trade.aggressor), e.trade.buy_order_id,
                     e.trade.sell_order_id);
      break;
    case EventKind::kStatus: fmt::format_to(it, ",\"phase\":\"{}\"", phase_name(e.status.phase)); break;
    default:
      fmt::format_to(it, ",\"order_id\":{},\"price\":{},\"qty\":{},\"side\":\"{}\"", e.order.order_id, e.order.price,
                     e.order.qty, side_char(e.order.side));
      break;
  }
  out += '}';
}

// ---- decoding ----------------------------------------------------------------------------------

namespace {

// Every field of every kind; a bit each in Fields::seen.
enum Field : uint32_t {
  kV, kKind, kSymbol, kSeq, kExchTs, kRef, kPrice, kQty, kAggressor, kBuyId, kSellId, kOrderId, kSide,
  kPhase, kBids, kAsks, kLast, kPrevClose, kCumVolume, kCumTurnover, kResync, kFieldCount
};
constexpr const char* kFieldNames[kFieldCount] = {
    "v", "kind", "symbol", "seq", "exch_ts_ns", "ref", "price", "qty", "aggressor", "buy_order_id",
    "sell_order_id", "order_id", "side", "phase", "bids", "asks", "last", "prev_close", "cum_volume",
    "cum_turnover", "resync"};
// "<field>: wrong type or out of range", one literal per field (reasons are static strings).
constexpr const char* kBadValue[kFieldCount] = {
    "v: not an integer", "kind: not a known kind", "symbol: not a string", "seq: not an unsigned integer",
    "exch_ts_ns: not an integer", "ref: not an object of prev_close/st", "price: not an integer",
    "qty: not an integer", "aggressor: not \"B\"/\"S\"/\"N\"", "buy_order_id: not an unsigned integer",
    "sell_order_id: not an unsigned integer", "order_id: not an unsigned integer", "side: not \"B\"/\"S\"/\"N\"",
    "phase: not a known phase", "bids: not an array of up to 10 [price,qty]",
    "asks: not an array of up to 10 [price,qty]", "last: not an integer", "prev_close: not an integer",
    "cum_volume: not an integer", "cum_turnover: not a number", "resync: not 0/1"};

constexpr uint32_t bit(Field f) { return 1u << f; }
constexpr uint32_t kCommon = bit(kV) | bit(kKind) | bit(kSymbol) | bit(kSeq) | bit(kExchTs);
constexpr uint32_t kRequired[kEventKindCount] = {
    kCommon | bit(kPhase) | bit(kBids) | bit(kAsks),                       // snapshot
    kCommon | bit(kPrice) | bit(kQty),                                     // trade
    kCommon | bit(kOrderId) | bit(kPrice) | bit(kQty) | bit(kSide),        // order_add
    kCommon | bit(kOrderId) | bit(kPrice) | bit(kQty) | bit(kSide),        // order_cancel
    kCommon | bit(kOrderId) | bit(kPrice) | bit(kQty) | bit(kSide),        // order_execute
    kCommon | bit(kPhase),                                                 // status
};
constexpr uint32_t kAllowed[kEventKindCount] = {
    kRequired[0] | bit(kRef) | bit(kLast) | bit(kPrevClose) | bit(kCumVolume) | bit(kCumTurnover) | bit(kResync),
    kRequired[1] | bit(kRef) | bit(kAggressor) | bit(kBuyId) | bit(kSellId),
    kRequired[2] | bit(kRef), kRequired[3] | bit(kRef), kRequired[4] | bit(kRef),
    kRequired[5] | bit(kRef),
};

int field_of(std::string_view key) {
  for (int i = 0; i < int(kFieldCount); ++i) {
    if (key == kFieldNames[i]) return i;
  }
  return -1;
}

bool parse_side(std::string_view s, Side& out) {
  if (s == "B") out = Side::kBuy;
  else if (s == "S") out = Side::kSell;
  else if (s == "N") out = Side::kNone;
  else return false;
  return true;
}

bool parse_kind(std::string_view s, EventKind& out) {
  for (int i = 0; i < kEventKindCount; ++i) {
    if (s == event_kind_name(static_cast<EventKind>(i))) {
      out = static_cast<EventKind>(i);
      return true;
    }
  }
  return false;
}

bool parse_phase(std::string_view s, Phase& out) {
  for (int i = 0; i <= static_cast<int>(Phase::kHalted); ++i) {
    if (s == phase_name(static_cast<Phase>(i))) {
      out = static_cast<Phase>(i);
      return true;
    }
  }
  return false;
}

// The decoded fields before the kind is known (fields may come in any order).
struct Fields {
  uint32_t seen = 0;
  EventKind kind = EventKind::kTrade;
  std::string_view symbol;
  uint64_t seq = 0, buy_id = 0, sell_id = 0, order_id = 0;
  int64_t exch_ts = 0, price = 0, qty = 0, last = 0, prev_close = 0, cum_volume = 0, resync = 0;
  double cum_turnover = 0;
  Side aggressor = Side::kNone, side = Side::kNone;
  Phase phase = Phase::kUnknown;
  Price ref_prev_close = 0;
  bool ref_st = false;
  Level bids[kBookLevels] = {}, asks[kBookLevels] = {};
};

bool read_levels(od::value v, Level* out) {
  od::array arr;
  if (v.get_array().get(arr)) return false;
  int n = 0;
  for (auto entry : arr) {
    od::array pair;
    if (n == kBookLevels || entry.get_array().get(pair)) return false;
    int k = 0;
    int64_t pq[2] = {};
    for (auto x : pair) {
      if (k == 2 || x.get_int64().get(pq[k])) return false;
      ++k;
    }
    if (k != 2) return false;
    out[n++] = Level{pq[0], pq[1]};
  }
  return true;
}

bool read_ref(od::value v, Fields& f) {
  od::object obj;
  if (v.get_object().get(obj)) return false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "prev_close") {
      if (field.value().get_int64().get(f.ref_prev_close)) return false;
    } else if (key == "st") {
      if (field.value().get_bool().get(f.ref_st)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// Reads one field's value into `f`; false when its type or value is wrong.
bool read_field(Field id, od::value v, Fields& f) {
  std::string_view s;
  switch (id) {
    case kV: { int64_t ver; return !v.get_int64().get(ver) && ver == kWireVersion; }
    case kKind: return !v.get_string().get(s) && parse_kind(s, f.kind);
    case kSymbol: return !v.get_string().get(f.symbol);
    case kSeq: return !v.get_uint64().get(f.seq);
    case kExchTs: return !v.get_int64().get(f.exch_ts);
    case kRef: return read_ref(v, f);
    case kPrice: return !v.get_int64().get(f.price);
    case kQty: return !v.get_int64().get(f.qty);
    case kAggressor: return !v.get_string().get(s) && parse_side(s, f.aggressor);
    case kBuyId: return !v.get_uint64().get(f.buy_id);
    case kSellId: return !v.get_uint64().get(f.sell_id);
    case kOrderId: return !v.get_uint64().get(f.order_id);
    case kSide: return !v.get_string().get(s) && parse_side(s, f.side);
    case kPhase: return !v.get_string().get(s) && parse_phase(s, f.phase);
    case kBids: return read_levels(v, f.bids);
    case kAsks: return read_levels(v, f.asks);
    case kLast: return !v.get_int64().get(f.last);
    case kPrevClose: return !v.get_int64().get(f.prev_close);
    case kCumVolume: return !v.get_int64().get(f.cum_volume);
    case kCumTurnover: return !v.get_double().get(f.cum_turnover);
    case kResync: return !v.get_int64().get(f.resync) && (f.resync == 0 || f.resync == 1);
    case kFieldCount: break;
  }
  return false;
}

void assemble(const Fields& f, WireEvent& out) {
  Event& e = out.event;
  e = Event::make(f.kind);
  e.seq = f.seq;
  e.exch_ts_ns = f.exch_ts;
  out.symbol = f.symbol;
  out.prev_close = f.ref_prev_close;
  out.is_st = f.ref_st;
  switch (f.kind) {
    case EventKind::kSnapshot: {
      SnapshotBody& s = e.snapshot;
      std::memcpy(s.bids, f.bids, sizeof s.bids);
      std::memcpy(s.asks, f.asks, sizeof s.asks);
      s.last = f.last;
      s.prev_close = f.prev_close;
      s.cum_volume = f.cum_volume;
      s.cum_turnover = f.cum_turnover;
      s.phase = f.phase;
      s.resync = uint8_t(f.resync);
      break;
    }
    case EventKind::kTrade: e.trade = TradeBody{f.price, f.qty, f.aggressor, f.buy_id, f.sell_id}; break;
    case EventKind::kStatus: e.status.phase = f.phase; break;
    default: e.order = OrderBody{f.order_id, f.price, f.qty, f.side}; break;
  }
}

}  // namespace

struct WireJsonDecoder::Impl {
  explicit Impl(size_t max_bytes) : parser(max_bytes), buf(max_bytes + simdjson::SIMDJSON_PADDING), max(max_bytes) {
    if (parser.allocate(max_bytes) != simdjson::SUCCESS) max = 0;  // every decode then says "too large"
  }
  od::parser parser;
  std::vector<char> buf;
  size_t max;
};

WireJsonDecoder::WireJsonDecoder(size_t max_message_bytes) : impl_(std::make_unique<Impl>(max_message_bytes)) {}
WireJsonDecoder::~WireJsonDecoder() = default;

WireDecodeStatus WireJsonDecoder::decode(std::span<const uint8_t> bytes, WireEvent& out) {
  using S = WireDecodeStatus;
  if (bytes.size() > impl_->max) return S::fail(InputError::kMalformedLine, "message too large");
  if (bytes.empty()) return S::fail(InputError::kTruncatedFile, "empty message");
  std::memcpy(impl_->buf.data(), bytes.data(), bytes.size());
  od::document doc;
  auto err = impl_->parser.iterate(impl_->buf.data(), bytes.size(), impl_->buf.size()).get(doc);
  if (err == simdjson::UTF8_ERROR) return S::fail(InputError::kBinaryGarbage, "not valid UTF-8");
  if (err) return S::fail(InputError::kMalformedLine, "not valid JSON");
  od::object obj;
  if (doc.get_object().get(obj)) return S::fail(InputError::kMalformedLine, "not a JSON object");
  Fields f;
  for (auto field : obj) {
    od::field fld;
    std::string_view key;
    if (std::move(field).get(fld) || fld.unescaped_key().get(key)) return S::fail(InputError::kMalformedLine, "not valid JSON");
    const int id = field_of(key);
    if (id < 0) return S::fail(InputError::kWrongColumnCount, "unknown field");
    if (f.seen & bit(Field(id))) return S::fail(InputError::kMalformedLine, "duplicate field");
    if (!read_field(Field(id), fld.value(), f)) return S::fail(InputError::kMalformedLine, kBadValue[id]);
    f.seen |= bit(Field(id));
  }
  // current_location() is in bounds only while tokens remain after the object.
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) return S::fail(InputError::kMalformedLine, "trailing content after the object");
  if (!(f.seen & bit(kV))) return S::fail(InputError::kWrongColumnCount, "missing field v (version)");
  if (!(f.seen & bit(kKind))) return S::fail(InputError::kWrongColumnCount, "missing field kind");
  const int k = static_cast<int>(f.kind);
  if ((f.seen & kRequired[k]) != kRequired[k]) return S::fail(InputError::kWrongColumnCount, "missing a required field for its kind");
  if (f.seen & ~kAllowed[k]) return S::fail(InputError::kWrongColumnCount, "field not allowed for its kind");
  assemble(f, out);
  return wire_validate(out);
}

}  // namespace ts
