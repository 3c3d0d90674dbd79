#include "ingest/crypto/decoder_base.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/civil_time.h"
#include "core/log.h"
#include "ingest/crypto/decimal_units.h"

namespace ts::crypto {

bool DecoderBase::parse(std::string_view json, const MessageContext& where, simdjson::dom::element& root) {
  // PERF NOTE: one copy into a buffer that keeps simdjson's padding; the buffer only grows.
  if (buf_.capacity() < json.size() + simdjson::SIMDJSON_PADDING) buf_.reserve(json.size() + simdjson::SIMDJSON_PADDING);
  buf_.assign(json.data(), json.size());
  auto r = parser_.parse(buf_.data(), buf_.size(), false);
  if (r.error()) {
    std::string why = "not JSON: ";
    why += simdjson::error_message(r.error());
    return reject(where, InputError::kMalformedLine, why);
  }
  root = r.value_unsafe();
  return true;
}

SymbolBook* DecoderBase::book_for(std::string_view pair, const MessageContext& where) {
  // PERF NOTE: a capture carries a handful of pairs (4 to 10 here); comparing the pair with each
  // is cheaper than copying it into key_ and hashing it (~250 instructions a message, callgrind).
  if (books_.size() <= kScanBooks) {
    for (const auto& b : books_) {
      if (b->pair == pair) return b.get();
    }
  }
  key_.assign(pair);
  if (auto it = by_pair_.find(key_); it != by_pair_.end()) return it->second;
  std::string name = venue_prefix(venue());
  name += ':';
  for (char c : pair) name += char(std::toupper(static_cast<unsigned char>(c)));
  const SymbolId id = symbols_.intern(name);
  if (id == kInvalidSymbol) {
    reject(where, InputError::kUnknownSymbol, "symbol table full: " + name);
    return nullptr;
  }
  auto b = std::make_unique<SymbolBook>();
  b->id = id;
  b->name = std::move(name);
  b->pair.assign(pair);
  const RefData& r = symbols_.ref(id);
  b->tick = r.tick;
  b->size = r.size_increment;
  SymbolBook* p = b.get();
  books_.push_back(std::move(b));
  by_pair_.emplace(key_, p);
  return p;
}

bool DecoderBase::fit_units(SymbolBook& b, std::span<const RawLevel> levels, std::vector<Level>* parsed) {
  if (b.units_fixed) return false;
  b.units_fixed = true;
  bool price_fits = true, qty_fits = true, all_parsed = true;
  int price_scale = 0, qty_scale = 0;
  if (parsed) parsed->resize(levels.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    const RawLevel& l = levels[i];
    Level v;
    const int qs = written_scale(l.qty);
    price_scale = std::max(price_scale, written_scale(l.price));
    qty_scale = std::max(qty_scale, qs);
    if (!parse_units(l.price, b.tick, v.price)) price_fits = false;
    // Sizes vary far more than prices: a first message whose sizes happen to fit a coarse
    // increment says little, so any size written finer than the increment decides.
    if (l.qty.empty()) {
      all_parsed = false;  // convert() rejects it
    } else if (!parse_units(l.qty, b.size, v.qty) || qs > b.size.scale) {
      qty_fits = false;
    }
    if (parsed) (*parsed)[i] = v;
  }
  b.price_scale = price_scale;
  b.qty_scale = qty_scale;
  if (price_fits && qty_fits) return all_parsed && parsed != nullptr;
  const Decimal old_tick = b.tick, old_size = b.size;
  if (!price_fits) b.tick = Decimal{1, std::min(price_scale, Decimal::kMaxScale)};
  if (!qty_fits) b.size = Decimal{1, std::min(std::max(qty_scale, 8), Decimal::kMaxScale)};
  RefData& r = symbols_.mutable_ref(b.id);
  r.tick = b.tick;
  r.tick_size = b.tick.to_double();
  r.size_increment = b.size;
  spdlog::info("{}: the instrument's units (tick {}, size {}) do not fit the feed; using tick {}, size {} "
               "from the venue's digits (an --instruments row sets them)",
               b.name, old_tick.to_string(), old_size.to_string(), b.tick.to_string(), b.size.to_string());
  return false;
}

bool DecoderBase::convert_one(SymbolBook& b, const RawLevel& raw, Level& out, const MessageContext& where) {
  if (!b.units_fixed) fit_units(b, std::span<const RawLevel>(&raw, 1));
  if (!parse_units(raw.price, b.tick, out.price)) {
    return reject(where, InputError::kBadPrice,
                  b.name + " price \"" + std::string(raw.price) + "\" is not a whole number of ticks of " +
                      b.tick.to_string());
  }
  if (!parse_units(raw.qty, b.size, out.qty)) {
    return reject(where, InputError::kBadSize,
                  b.name + " size \"" + std::string(raw.qty) + "\" is not a whole number of " + b.size.to_string());
  }
  return true;
}

bool DecoderBase::convert(SymbolBook& b, std::span<const RawLevel> raw, std::vector<Level>& out,
                          const MessageContext& where) {
  if (!b.units_fixed && fit_units(b, raw, &out)) return true;  // kept units: `out` is the conversion
  out.resize(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (!convert_one(b, raw[i], out[i], where)) return false;
  }
  return true;
}

void DecoderBase::publish_top(SymbolBook& b, const MessageContext& where, int64_t exch_ns, std::vector<Event>& out) {
  if (b.book.crossed()) {
    ++counters_.crossed_books;
    return;
  }
  Event e = Event::make(EventKind::kSnapshot);
  b.book.top(e.snapshot.bids, e.snapshot.asks);
  if (b.shown && std::memcmp(e.snapshot.bids, b.shown_bids, sizeof(b.shown_bids)) == 0 &&
      std::memcmp(e.snapshot.asks, b.shown_asks, sizeof(b.shown_asks)) == 0) {
    return;
  }
  std::memcpy(b.shown_bids, e.snapshot.bids, sizeof(b.shown_bids));
  std::memcpy(b.shown_asks, e.snapshot.asks, sizeof(b.shown_asks));
  b.shown = true;
  e.snapshot.resync = 1;
  e.snapshot.phase = Phase::kContinuous;
  e.symbol = b.id;
  e.seq = where.line;
  e.exch_ts_ns = exch_ns;
  push_event(e, out);
}

void DecoderBase::mark_stale(SymbolBook& b, const MessageContext& where, int64_t exch_ns, std::vector<Event>& out,
                             const char* kind, const std::string& detail) {
  note_issue(where, kind, b.name + " " + detail);
  ++counters_.stale_books;
  b.sync = BookSync::kStale;
  b.book.clear();
  b.pending.clear();
  b.ticker_u = 0;
  // One empty book downstream: no book-based rule fires on levels we know to be wrong.
  b.shown = false;
  publish_top(b, where, exch_ns, out);
}

void DecoderBase::push_trade(SymbolBook& b, const MessageContext& where, int64_t exch_ns, const Level& print,
                             Side aggressor, std::vector<Event>& out, uint64_t buy_id, uint64_t sell_id) {
  Event e = Event::make(EventKind::kTrade);
  e.symbol = b.id;
  e.seq = where.line;
  e.exch_ts_ns = exch_ns;
  e.trade.price = print.price;
  e.trade.qty = print.qty;
  e.trade.aggressor = aggressor;
  e.trade.buy_order_id = buy_id;
  e.trade.sell_order_id = sell_id;
  push_event(e, out);
}

void DecoderBase::push_event(Event& e, std::vector<Event>& out) {
  ++counters_.events;
  out.push_back(e);
}

bool DecoderBase::reject(const MessageContext& where, InputError kind, std::string_view detail) {
  ++counters_.bad_messages;
  errors_.report(kind, where.file, where.line, detail);
  return false;
}

void DecoderBase::note_issue(const MessageContext& where, const char* kind, const std::string& detail) {
  std::string text = std::string(where.file) + ":" + std::to_string(where.line) + ": " + kind + ": " + detail;
  if (counters_.issues.size() < DecoderCounters::kMaxIssues) {
    spdlog::warn("{}", text);
    counters_.issues.push_back(std::move(text));
  }
}

bool parse_iso8601_ns(std::string_view t, int64_t& out_ns) {
  // YYYY-MM-DDTHH:MM:SS[.fffffffff]Z
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != ' ') || t[13] != ':' ||
      t[16] != ':') {
    return false;
  }
  auto num = [&](size_t at, size_t n, int64_t& v) {
    v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    return true;
  };
  int64_t y, mo, d, h, mi, s;
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, s)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  // ns since the epoch in int64 span 1677..2262: a year outside 1970..2261 overflowed (UB; found
  // by crypto_fuzz with UBSan) and is no venue's time.
  if (y < 1970 || y > 2261) return false;
  int64_t frac_ns = 0;
  size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    int64_t scale = 100000000;
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      frac_ns += (t[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (i >= t.size() || t[i] != 'Z') return false;
  const int64_t days = days_from_civil(CivilDate{int32_t(y), uint32_t(mo), uint32_t(d)});
  out_ns = ((days * 24 + h) * 60 + mi) * 60 * 1'000'000'000LL + s * 1'000'000'000LL + frac_ns;
  return true;
}

bool venue_time_ns(uint64_t count, int64_t unit_ns, int64_t& out_ns) {
  if (unit_ns <= 0 || count > uint64_t(INT64_MAX / unit_ns)) return false;
  out_ns = int64_t(count) * unit_ns;
  return true;
}

bool json_u64(simdjson::dom::element e, uint64_t& out) {
  if (e.is_string()) {
    std::string_view s = e.get_string().value_unsafe();
    if (s.empty() || s.size() > 19) return false;
    uint64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + uint64_t(c - '0');
    }
    out = v;
    return true;
  }
  if (e.is_uint64()) {
    out = e.get_uint64().value_unsafe();
    return true;
  }
  if (e.is_int64()) {
    const int64_t v = e.get_int64().value_unsafe();
    if (v < 0) return false;
    out = uint64_t(v);
    return true;
  }
  return false;
}

bool raw_levels(simdjson::dom::element arr, std::vector<RawLevel>& out) {
  simdjson::dom::array a;
  if (arr.get_array().get(a)) return false;
  for (simdjson::dom::element lv : a) {
    simdjson::dom::array pq;
    if (lv.get_array().get(pq) || pq.size() < 2) return false;
    std::string_view p, q;
    if (pq.at(0).get_string().get(p) || pq.at(1).get_string().get(q)) return false;
    out.push_back({p, q});
  }
  return true;
}

}  // namespace ts::crypto
