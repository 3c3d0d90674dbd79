#include "core/instrument_ref.h"

#include <algorithm>

namespace ts {

void fill_ref_data(const Instrument& in, RefData& r) {
  switch (in.board) {
    case Board::kSseMain:
    case Board::kSseStar: r.market = Market::kShanghai; break;
    case Board::kSzseMain:
    case Board::kSzseChiNext: r.market = Market::kShenzhen; break;
    case Board::kBse: r.market = Market::kBeijing; break;
    case Board::kNasdaq:
    case Board::kNyse:
    case Board::kUsListed: r.market = Market::kUs; break;
    default: r.market = Market::kUnknown; break;
  }
  r.instrument = &in;
  r.tick_size = in.tick_size.to_double();
  r.tick = in.tick_size;
  r.size_increment = in.size_increment;
  r.lot_size = in.lot_size;  // size increments; whole shares on every share market
  r.limit_pct = in.limit_bps / 10000.0;
  r.is_st = in.is_st;
  if (r.prev_close <= 0 && in.prev_close.is_positive()) {
    if (auto t = to_units(in.prev_close, in.tick_size)) r.prev_close = t.value();
  }
  r.limit_up = limit_up_ticks(r.prev_close, in.limit_bps);
  r.limit_down = limit_down_ticks(r.prev_close, in.limit_bps);
}

double lot_increments(const RefData& r, double price_ticks) {
  if (r.instrument == nullptr) return double(r.lot_size);
  const double increment = r.size_increment.to_double();
  if (!(increment > 0)) return double(r.lot_size);
  const double units = trading_lot_units(*r.instrument, price_ticks * r.tick.to_double());
  return std::max(1.0, units / increment);
}

Result<SymbolId> intern_instrument(SymbolTable& symbols, InstrumentTable& instruments,
                                   std::string_view symbol) {
  auto in = instruments.resolve(symbol);
  if (!in) return in.status();
  const SymbolId id = symbols.intern(symbol);
  if (id == kInvalidSymbol) {
    return Status{StatusCode::kOutOfRange, "symbol table full: " + std::string(symbol)};
  }
  fill_ref_data(*in.value(), symbols.mutable_ref(id));
  return id;
}

void InstrumentRefResolver::fill(std::string_view name, RefData& r) {
  auto in = table_.resolve(name);
  if (!in) {
    ++unknown_;
    if (details_.size() < kMaxKept) details_.push_back(in.status().message());
    return;
  }
  fill_ref_data(*in.value(), r);
}

}  // namespace ts
