#include "ingest/wire_format.h"

#include <cmath>

#include "ingest/csv_format.h"

namespace ts {

const char* wire_encoding_name(WireEncoding e) { return e == WireEncoding::kJson ? "json" : "binary"; }

bool parse_wire_encoding(std::string_view s, WireEncoding& out) {
  if (s == "json") {
    out = WireEncoding::kJson;
  } else if (s == "binary") {
    out = WireEncoding::kBinary;
  } else {
    return false;
  }
  return true;
}

namespace {

bool valid_side(Side s) { return s == Side::kBuy || s == Side::kSell || s == Side::kNone; }
bool valid_phase(Phase p) { return static_cast<uint8_t>(p) <= static_cast<uint8_t>(Phase::kHalted); }

WireDecodeStatus fail(InputError k, const char* why) { return WireDecodeStatus::fail(k, why); }

WireDecodeStatus validate_snapshot(const SnapshotBody& s) {
  if (!valid_phase(s.phase)) return fail(InputError::kMalformedLine, "unknown phase");
  if (s.resync > 1) return fail(InputError::kMalformedLine, "resync not 0/1");
  if (!std::isfinite(s.cum_turnover)) return fail(InputError::kNotANumber, "cum_turnover not finite");
  if (s.last < 0 || s.prev_close < 0) return fail(InputError::kBadPrice, "last/prev_close < 0");
  if (s.cum_volume < 0) return fail(InputError::kBadSize, "cum_volume < 0");
  for (const Level* side : {s.bids, s.asks}) {
    for (int i = 0; i < kBookLevels; ++i) {
      const Level& l = side[i];
      if (l.price < 0 || (l.price == 0 && l.qty != 0)) return fail(InputError::kBadPrice, "bad level price");
      if (l.price > 0 && l.qty <= 0) return fail(InputError::kBadSize, "level qty <= 0");
    }
  }
  const Price bid = s.bids[0].price, ask = s.asks[0].price;
  const bool auction = s.phase == Phase::kOpeningAuction || s.phase == Phase::kClosingAuction;
  if (bid > 0 && ask > 0 && (auction ? bid > ask : bid >= ask)) {
    return fail(InputError::kCrossedBook, "best bid >= best ask");
  }
  return WireDecodeStatus::success();
}

}  // namespace

WireDecodeStatus wire_validate(const WireEvent& w) {
  if (!ingest::valid_symbol_name(w.symbol)) return fail(InputError::kUnknownSymbol, "bad symbol name");
  if (w.prev_close < 0) return fail(InputError::kBadPrice, "prev_close < 0");
  const Event& e = w.event;
  switch (e.kind) {
    case EventKind::kSnapshot: return validate_snapshot(e.snapshot);
    case EventKind::kTrade:
      if (!valid_side(e.trade.aggressor)) return fail(InputError::kMalformedLine, "aggressor not B/S/N");
      if (e.trade.price <= 0) return fail(InputError::kBadPrice, "price <= 0");
      if (e.trade.qty <= 0) return fail(InputError::kBadSize, "qty <= 0");
      return WireDecodeStatus::success();
    case EventKind::kStatus:
      if (!valid_phase(e.status.phase)) return fail(InputError::kMalformedLine, "unknown phase");
      return WireDecodeStatus::success();
    case EventKind::kOrderAdd:
    case EventKind::kOrderCancel:
    case EventKind::kOrderExecute:
      if (!valid_side(e.order.side)) return fail(InputError::kMalformedLine, "side not B/S/N");
      // An add must rest at a price; cancels and executions name the order, price may be 0.
      if (e.kind == EventKind::kOrderAdd ? e.order.price <= 0 : e.order.price < 0) {
        return fail(InputError::kBadPrice, "price out of range");
      }
      if (e.order.qty <= 0) return fail(InputError::kBadSize, "qty <= 0");
      return WireDecodeStatus::success();
  }
  return fail(InputError::kMalformedLine, "unknown kind");
}

}  // namespace ts
