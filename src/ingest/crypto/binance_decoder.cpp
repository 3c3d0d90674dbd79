// Binance spot: combined-stream messages ({"stream": ..., "data": {...}}) or raw stream messages,
// and the REST depth snapshot (/api/v3/depth). The book follows Binance's documented procedure
// ("How to manage a local order book correctly"): diffs received before the snapshot are kept;
// on the snapshot, diffs with u <= lastUpdateId are dropped, the first applied diff must have
// U <= lastUpdateId + 1 <= u, and every later diff U == previous u + 1 (else: sequence_gap, stale
// until the next snapshot). bookTicker is compared with the book whenever the book's last u equals
// the ticker's u (bbo_checks / bbo_mismatches); it emits no event.
#include <string>

#include "ingest/crypto/decoders.h"
#include "ingest/crypto/decoder_base.h"

namespace ts::crypto {

namespace {

namespace dom = simdjson::dom;

constexpr size_t kMaxPending = 4096;  // diffs kept per symbol while waiting for the snapshot

class BinanceDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Venue venue() const override { return Venue::kBinance; }

  bool decode(std::string_view json, const MessageContext& where, std::vector<Event>& out) override {
    ++counters_.messages;
    dom::element root;
    if (!parse(json, where, root)) return false;
    if (where.is_rest) return snapshot(root, where, out);
    dom::element data = root;
    if (dom::element d; !root["data"].get(d)) data = d;
    if (!data.is_object()) return ignore();
    std::string_view type;
    if (data["e"].get_string().get(type)) {
      // No event type: bookTicker ({"u","s","b","B","a","A"}), or a control message.
      if (dom::element u; !data["u"].get(u) && !data["A"].error()) return book_ticker(data, where);
      return ignore();
    }
    if (type == "depthUpdate") return diff(data, where, out);
    if (type == "trade" || type == "aggTrade") return trade(data, where, out);
    return ignore();  // kline, 24hrTicker, ...
  }

 private:
  bool fail(const MessageContext& w, const char* what) { return reject(w, InputError::kMalformedLine, what); }

  bool snapshot(dom::element root, const MessageContext& where, std::vector<Event>& out) {
    const size_t at = where.url.find("symbol=");
    if (at == std::string_view::npos) return fail(where, "binance: REST depth body without ?symbol= in its URL");
    std::string_view pair = where.url.substr(at + 7);
    pair = pair.substr(0, pair.find('&'));
    uint64_t last_id;
    dom::element id_el;
    if (root["lastUpdateId"].get(id_el) || !json_u64(id_el, last_id)) {
      return fail(where, "binance: depth snapshot without lastUpdateId");
    }
    raw_.clear();
    dom::element bids, asks;
    if (root["bids"].get(bids) || root["asks"].get(asks) || !raw_levels(bids, raw_)) {
      return fail(where, "binance: depth snapshot bids/asks malformed");
    }
    const size_t nbids = raw_.size();
    if (!raw_levels(asks, raw_)) return fail(where, "binance: depth snapshot asks malformed");
    SymbolBook* b = book_for(pair, where);
    if (!b || !convert(*b, raw_, levels_, where)) return false;
    b->book.load(true, levels_.data(), nbids);
    b->book.load(false, levels_.data() + nbids, levels_.size() - nbids);
    b->sync = BookSync::kLive;
    b->last_update = last_id;
    b->first_diff = true;
    b->shown = false;
    ++counters_.snapshots;
    auto pending = std::move(b->pending);
    b->pending.clear();
    for (auto& p : pending) {
      if (b->sync != BookSync::kLive) {
        ++counters_.dropped_while_stale;
        continue;
      }
      MessageContext pw = where;
      pw.line = p.line;
      apply(*b, p.first, p.last, p.changes.data(), p.changes.size(), p.exch_ns, pw, out);
    }
    publish_top(*b, where, where.recv_ns, out);
    return true;
  }

  bool diff(dom::element d, const MessageContext& where, std::vector<Event>& out) {
    std::string_view pair;
    uint64_t first, last, e_ms = 0;
    if (d["s"].get_string().get(pair) || d["U"].get_uint64().get(first) || d["u"].get_uint64().get(last)) {
      return fail(where, "binance: depthUpdate without s/U/u");
    }
    if (d["E"].get_uint64().get(e_ms)) e_ms = 0;
    int64_t exch_ns = where.recv_ns;
    if (e_ms != 0 && !venue_time_ns(e_ms, 1'000'000, exch_ns)) return fail(where, "binance: E past the year 2262");
    raw_.clear();
    dom::element bids, asks;
    if (d["b"].get(bids) || d["a"].get(asks) || !raw_levels(bids, raw_)) {
      return fail(where, "binance: depthUpdate b/a malformed");
    }
    const size_t nbids = raw_.size();
    if (!raw_levels(asks, raw_)) return fail(where, "binance: depthUpdate a malformed");
    SymbolBook* b = book_for(pair, where);
    if (!b || !convert(*b, raw_, levels_, where)) return false;
    changes_.clear();
    for (size_t i = 0; i < levels_.size(); ++i) changes_.emplace_back(i < nbids, levels_[i]);
    switch (b->sync) {
      case BookSync::kWaiting:
        if (b->pending.size() >= kMaxPending) {
          b->pending.erase(b->pending.begin());
          ++counters_.dropped_before_sync;
        }
        b->pending.push_back({first, last, exch_ns, where.line, changes_});
        return true;
      case BookSync::kStale: ++counters_.dropped_while_stale; return true;
      case BookSync::kLive: apply(*b, first, last, changes_.data(), changes_.size(), exch_ns, where, out); return true;
    }
    return true;
  }

  // Applies one diff to a live book per the procedure; marks it stale on a gap.
  void apply(SymbolBook& b, uint64_t first, uint64_t last, const std::pair<bool, Level>* ch, size_t n,
             int64_t exch_ns, const MessageContext& where, std::vector<Event>& out) {
    if (last <= b.last_update) {
      ++counters_.dropped_before_sync;
      return;
    }
    const bool follows = b.first_diff ? first <= b.last_update + 1 : first == b.last_update + 1;
    if (!follows) {
      ++counters_.sequence_gap;
      mark_stale(b, where, exch_ns, out, "sequence_gap",
                 "U=" + std::to_string(first) + " after u=" + std::to_string(b.last_update));
      return;
    }
    for (size_t i = 0; i < n; ++i) b.book.set(ch[i].first, ch[i].second.price, ch[i].second.qty);
    b.last_update = last;
    b.first_diff = false;
    if (b.ticker_u == last) compare_ticker(b);
    publish_top(b, where, exch_ns, out);
  }

  bool book_ticker(dom::element d, const MessageContext& where) {
    std::string_view pair, bp, bq, ap, aq;
    uint64_t u;
    if (d["s"].get_string().get(pair) || d["u"].get_uint64().get(u) || d["b"].get_string().get(bp) ||
        d["B"].get_string().get(bq) || d["a"].get_string().get(ap) || d["A"].get_string().get(aq)) {
      return fail(where, "binance: bookTicker without s/u/b/B/a/A");
    }
    SymbolBook* b = book_for(pair, where);
    if (!b) return false;
    RawLevel raw[2] = {{bp, bq}, {ap, aq}};
    if (!b->units_fixed) fit_units(*b, raw);
    if (!convert_one(*b, raw[0], b->ticker_bid, where) || !convert_one(*b, raw[1], b->ticker_ask, where)) return false;
    b->ticker_u = u;
    if (b->sync == BookSync::kLive && u == b->last_update) compare_ticker(*b);
    return true;
  }

  void compare_ticker(SymbolBook& b) {
    ++counters_.bbo_checks;
    b.ticker_u = 0;
    const LevelBook& k = b.book;
    const bool same = k.depth(true) > 0 && k.depth(false) > 0 && k.level(true, 0).price == b.ticker_bid.price &&
                      k.level(true, 0).qty == b.ticker_bid.qty && k.level(false, 0).price == b.ticker_ask.price &&
                      k.level(false, 0).qty == b.ticker_ask.qty;
    if (!same) ++counters_.bbo_mismatches;
  }

  bool trade(dom::element d, const MessageContext& where, std::vector<Event>& out) {
    std::string_view pair, p, q;
    uint64_t t_ms = 0;
    bool buyer_maker = false;
    if (d["s"].get_string().get(pair) || d["p"].get_string().get(p) || d["q"].get_string().get(q) ||
        d["m"].get_bool().get(buyer_maker)) {
      return fail(where, "binance: trade without s/p/q/m");
    }
    if (d["T"].get_uint64().get(t_ms)) t_ms = 0;
    int64_t trade_ns = where.recv_ns;
    if (t_ms != 0 && !venue_time_ns(t_ms, 1'000'000, trade_ns)) return fail(where, "binance: T past the year 2262");
    SymbolBook* b = book_for(pair, where);
    Level print;
    if (!b || !convert_one(*b, {p, q}, print, where)) return false;
    uint64_t buy_id = 0, sell_id = 0;
    if (d["b"].get_uint64().get(buy_id)) buy_id = 0;
    if (d["a"].get_uint64().get(sell_id)) sell_id = 0;
    if (d["e"].get_string().value_unsafe() == "aggTrade") buy_id = sell_id = 0;  // "a" is the aggregate id
    // m: the buyer is the maker, so the seller took liquidity.
    push_trade(*b, where, trade_ns, print,
               buyer_maker ? Side::kSell : Side::kBuy, out, buy_id, sell_id);
    return true;
  }

  std::vector<std::pair<bool, Level>> changes_;
};

}  // namespace

std::unique_ptr<VenueDecoder> make_binance_decoder(SymbolTable& symbols, InputErrors& errors) {
  return std::make_unique<BinanceDecoder>(symbols, errors);
}

}  // namespace ts::crypto
