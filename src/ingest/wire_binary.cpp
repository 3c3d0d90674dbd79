#include "ingest/wire_binary.h"

#include <bit>
#include <cstring>

namespace ts {

static_assert(std::endian::native == std::endian::little, "the binary wire format is read by memcpy");

namespace {

constexpr uint8_t kMagic0 = 'T', kMagic1 = 'K';
constexpr uint8_t kFlagSt = 1;
constexpr size_t kSnapshotBytes = 360, kTradeBytes = 40, kOrderBytes = 32, kStatusBytes = 8;

template <typename T>
void put(uint8_t* p, size_t off, T v) {
  std::memcpy(p + off, &v, sizeof v);
}
template <typename T>
T get(const uint8_t* p, size_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

bool zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i]) return false;
  }
  return true;
}

void encode_body(const Event& e, uint8_t* b) {
  switch (e.kind) {
    case EventKind::kSnapshot: {
      const SnapshotBody& s = e.snapshot;
      for (int i = 0; i < kBookLevels; ++i) {
        put(b, 16 * i, s.bids[i].price);
        put(b, 16 * i + 8, s.bids[i].qty);
        put(b, 160 + 16 * i, s.asks[i].price);
        put(b, 160 + 16 * i + 8, s.asks[i].qty);
      }
      put(b, 320, s.last);
      put(b, 328, s.prev_close);
      put(b, 336, s.cum_volume);
      put(b, 344, s.cum_turnover);
      b[352] = static_cast<uint8_t>(s.phase);
      b[353] = s.resync;
      break;
    }
    case EventKind::kTrade:
      put(b, 0, e.trade.price);
      put(b, 8, e.trade.qty);
      put(b, 16, e.trade.buy_order_id);
      put(b, 24, e.trade.sell_order_id);
      put(b, 32, static_cast<int8_t>(e.trade.aggressor));
      break;
    case EventKind::kStatus: b[0] = static_cast<uint8_t>(e.status.phase); break;
    default:
      put(b, 0, e.order.order_id);
      put(b, 8, e.order.price);
      put(b, 16, e.order.qty);
      put(b, 24, static_cast<int8_t>(e.order.side));
      break;
  }
}

WireDecodeStatus decode_body(const uint8_t* b, Event& e) {
  switch (e.kind) {
    case EventKind::kSnapshot: {
      SnapshotBody& s = e.snapshot;
      for (int i = 0; i < kBookLevels; ++i) {
        s.bids[i] = Level{get<int64_t>(b, 16 * i), get<int64_t>(b, 16 * i + 8)};
        s.asks[i] = Level{get<int64_t>(b, 160 + 16 * i), get<int64_t>(b, 160 + 16 * i + 8)};
      }
      s.last = get<int64_t>(b, 320);
      s.prev_close = get<int64_t>(b, 328);
      s.cum_volume = get<int64_t>(b, 336);
      s.cum_turnover = get<double>(b, 344);
      s.phase = static_cast<Phase>(b[352]);
      s.resync = b[353];
      if (!zero(b + 354, 6)) return WireDecodeStatus::fail(InputError::kMalformedLine, "nonzero padding");
      break;
    }
    case EventKind::kTrade:
      e.trade.price = get<int64_t>(b, 0);
      e.trade.qty = get<int64_t>(b, 8);
      e.trade.buy_order_id = get<uint64_t>(b, 16);
      e.trade.sell_order_id = get<uint64_t>(b, 24);
      e.trade.aggressor = static_cast<Side>(get<int8_t>(b, 32));
      if (!zero(b + 33, 7)) return WireDecodeStatus::fail(InputError::kMalformedLine, "nonzero padding");
      break;
    case EventKind::kStatus:
      e.status.phase = static_cast<Phase>(b[0]);
      if (!zero(b + 1, 7)) return WireDecodeStatus::fail(InputError::kMalformedLine, "nonzero padding");
      break;
    default:
      e.order.order_id = get<uint64_t>(b, 0);
      e.order.price = get<int64_t>(b, 8);
      e.order.qty = get<int64_t>(b, 16);
      e.order.side = static_cast<Side>(get<int8_t>(b, 24));
      if (!zero(b + 25, 7)) return WireDecodeStatus::fail(InputError::kMalformedLine, "nonzero padding");
      break;
  }
  return WireDecodeStatus::success();
}

}  // namespace

size_t wire_binary_body_bytes(EventKind kind) {
  switch (kind) {
    case EventKind::kSnapshot: return kSnapshotBytes;
    case EventKind::kTrade: return kTradeBytes;
    case EventKind::kOrderAdd:
    case EventKind::kOrderCancel:
    case EventKind::kOrderExecute: return kOrderBytes;
    case EventKind::kStatus: return kStatusBytes;
  }
  return 0;
}

size_t wire_binary_encode(const WireEvent& w, std::span<uint8_t> buf) {
  const size_t body = wire_binary_body_bytes(w.event.kind);
  const size_t total = kWireBinaryHeaderBytes + body + w.symbol.size();
  if (body == 0 || w.symbol.empty() || w.symbol.size() > kWireBinaryMaxSymbolBytes || buf.size() < total) return 0;
  uint8_t* p = buf.data();
  std::memset(p, 0, kWireBinaryHeaderBytes + body);
  p[0] = kMagic0;
  p[1] = kMagic1;
  p[2] = kWireVersion;
  p[3] = static_cast<uint8_t>(w.event.kind);
  p[4] = static_cast<uint8_t>(w.symbol.size());
  p[5] = w.is_st ? kFlagSt : 0;
  put(p, 6, static_cast<uint16_t>(body));
  put(p, 8, w.event.seq);
  put(p, 16, w.event.exch_ts_ns);
  put(p, 24, w.prev_close);
  encode_body(w.event, p + kWireBinaryHeaderBytes);
  std::memcpy(p + kWireBinaryHeaderBytes + body, w.symbol.data(), w.symbol.size());
  return total;
}

void wire_binary_append(const WireEvent& w, std::string& out) {
  uint8_t buf[kWireBinaryMaxBytes];
  const size_t n = wire_binary_encode(w, buf);
  out.append(reinterpret_cast<const char*>(buf), n);
}

WireDecodeStatus wire_binary_decode(std::span<const uint8_t> bytes, WireEvent& out) {
  using S = WireDecodeStatus;
  const uint8_t* p = bytes.data();
  if (bytes.size() < kWireBinaryHeaderBytes) return S::fail(InputError::kTruncatedFile, "shorter than the header");
  if (p[0] != kMagic0 || p[1] != kMagic1) return S::fail(InputError::kBinaryGarbage, "bad magic (not 'TK')");
  if (p[2] != kWireVersion) return S::fail(InputError::kMalformedLine, "unsupported wire version");
  if (p[3] >= kEventKindCount) return S::fail(InputError::kMalformedLine, "unknown kind");
  const auto kind = static_cast<EventKind>(p[3]);
  const size_t body = wire_binary_body_bytes(kind);
  const size_t sym_len = p[4];
  if (get<uint16_t>(p, 6) != body) return S::fail(InputError::kWrongColumnCount, "body_bytes wrong for its kind");
  if (sym_len == 0 || sym_len > kWireBinaryMaxSymbolBytes) return S::fail(InputError::kUnknownSymbol, "symbol length not 1..32");
  if (p[5] & ~kFlagSt) return S::fail(InputError::kMalformedLine, "unknown flag bits");
  const size_t total = kWireBinaryHeaderBytes + body + sym_len;
  if (bytes.size() < total) return S::fail(InputError::kTruncatedFile, "message shorter than its layout");
  if (bytes.size() > total) return S::fail(InputError::kWrongColumnCount, "trailing bytes after the symbol");
  out.event = Event::make(kind);
  out.event.seq = get<uint64_t>(p, 8);
  out.event.exch_ts_ns = get<int64_t>(p, 16);
  out.prev_close = get<int64_t>(p, 24);
  out.is_st = p[5] & kFlagSt;
  if (S s = decode_body(p + kWireBinaryHeaderBytes, out.event); !s.ok()) return s;
  out.symbol = std::string_view(reinterpret_cast<const char*>(p + kWireBinaryHeaderBytes + body), sym_len);
  return wire_validate(out);
}

}  // namespace ts
