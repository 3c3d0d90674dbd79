// Bitstamp websocket v2 (`diff_order_book_<pair>`, `live_trades_<pair>`) with the REST snapshot
// /api/v2/order_book/<pair>, following Bitstamp's documented procedure: diffs received before
// the snapshot are kept; on the snapshot, every diff whose microtimestamp is not after the
// snapshot's is dropped (dropped_before_sync) and the rest apply in order. The feed has no
// sequence numbers: a gap cannot be seen, only a diff older than the book (dropped).
// - Diffs: {"event":"data","channel":"diff_order_book_ethusd","data":{"microtimestamp",
//   "bids":[[p, s]],"asks"}}; size 0 removes the level.
// - Trades: {"event":"trade","data":{"price_str","amount_str","type" 0 buy / 1 sell (the
//   aggressor),"microtimestamp","buy_order_id","sell_order_id"}}.
// - bts:* control messages and other channels (order_book, live_orders) are ignored.
#include <string>

#include "ingest/crypto/decoder_base.h"
#include "ingest/crypto/decoders.h"

namespace ts::crypto {

namespace {

namespace dom = simdjson::dom;

constexpr size_t kMaxPending = 4096;

class BitstampDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Venue venue() const override { return Venue::kBitstamp; }

  bool decode(std::string_view json, const MessageContext& where, std::vector<Event>& out) override {
    ++counters_.messages;
    dom::element root;
    if (!parse(json, where, root)) return false;
    if (where.is_rest) return snapshot(root, where, out);
    std::string_view event, channel;
    if (root["event"].get_string().get(event) || root["channel"].get_string().get(channel)) return ignore();
    dom::element data;
    if (event == "data" && channel.starts_with("diff_order_book_")) {
      if (root["data"].get(data)) return fail(where, "bitstamp: diff without data");
      return diff(channel.substr(16), data, where, out);
    }
    if (event == "trade" && channel.starts_with("live_trades_")) {
      if (root["data"].get(data)) return fail(where, "bitstamp: trade without data");
      return trade(channel.substr(12), data, where, out);
    }
    return ignore();
  }

 private:
  bool fail(const MessageContext& w, const char* what) { return reject(w, InputError::kMalformedLine, what); }

  // Sides of `d` into raw_ (bids first); nbids = how many are bids.
  bool sides(dom::element d, size_t& nbids) {
    raw_.clear();
    dom::element bids, asks;
    if (d["bids"].get(bids) || d["asks"].get(asks) || !raw_levels(bids, raw_)) return false;
    nbids = raw_.size();
    return raw_levels(asks, raw_);
  }

  bool snapshot(dom::element root, const MessageContext& where, std::vector<Event>& out) {
    std::string_view url = where.url;
    while (url.ends_with('/')) url.remove_suffix(1);
    const std::string_view pair = url.substr(url.rfind('/') + 1);
    uint64_t us;
    dom::element mt;
    size_t nbids;
    if (pair.empty() || root["microtimestamp"].get(mt) || !json_u64(mt, us)) {
      return fail(where, "bitstamp: REST order_book without microtimestamp or pair in its URL");
    }
    int64_t snapshot_ns = 0;
    if (!venue_time_ns(us, 1'000, snapshot_ns)) return fail(where, "bitstamp: microtimestamp past the year 2262");
    if (!sides(root, nbids)) return fail(where, "bitstamp: REST order_book bids/asks malformed");
    SymbolBook* b = book_for(pair, where);
    if (!b || !convert(*b, raw_, levels_, where)) return false;
    b->book.load(true, levels_.data(), nbids);
    b->book.load(false, levels_.data() + nbids, levels_.size() - nbids);
    b->sync = BookSync::kLive;
    b->snapshot_us = int64_t(us);
    b->shown = false;
    ++counters_.snapshots;
    auto pending = std::move(b->pending);
    b->pending.clear();
    for (auto& p : pending) {
      MessageContext pw = where;
      pw.line = p.line;
      apply(*b, int64_t(p.first), p.changes, p.exch_ns, pw, out);
    }
    publish_top(*b, where, snapshot_ns, out);
    return true;
  }

  bool diff(std::string_view pair, dom::element d, const MessageContext& where, std::vector<Event>& out) {
    uint64_t us;
    dom::element mt;
    size_t nbids;
    if (d["microtimestamp"].get(mt) || !json_u64(mt, us)) return fail(where, "bitstamp: diff without microtimestamp");
    int64_t diff_ns = 0;
    if (!venue_time_ns(us, 1'000, diff_ns)) return fail(where, "bitstamp: microtimestamp past the year 2262");
    if (!sides(d, nbids)) return fail(where, "bitstamp: diff bids/asks malformed");
    SymbolBook* b = book_for(pair, where);
    if (!b || !convert(*b, raw_, levels_, where)) return false;
    changes_.clear();
    for (size_t i = 0; i < levels_.size(); ++i) changes_.emplace_back(i < nbids, levels_[i]);
    if (b->sync == BookSync::kWaiting) {
      if (b->pending.size() >= kMaxPending) {
        b->pending.erase(b->pending.begin());
        ++counters_.dropped_before_sync;
      }
      b->pending.push_back({us, us, diff_ns, where.line, changes_});
      return true;
    }
    apply(*b, int64_t(us), changes_, diff_ns, where, out);
    return true;
  }

  void apply(SymbolBook& b, int64_t us, const std::vector<std::pair<bool, Level>>& ch, int64_t exch_ns,
             const MessageContext& where, std::vector<Event>& out) {
    if (us <= b.snapshot_us) {
      ++counters_.dropped_before_sync;
      return;
    }
    for (const auto& [bid, l] : ch) b.book.set(bid, l.price, l.qty);
    publish_top(b, where, exch_ns, out);
  }

  bool trade(std::string_view pair, dom::element d, const MessageContext& where, std::vector<Event>& out) {
    std::string_view p, q;
    uint64_t us = 0, type = 0, buy = 0, sell = 0;
    dom::element mt, ty;
    if (d["price_str"].get_string().get(p) || d["amount_str"].get_string().get(q) || d["type"].get(ty) ||
        !json_u64(ty, type)) {
      return fail(where, "bitstamp: trade without price_str/amount_str/type");
    }
    if (!d["microtimestamp"].get(mt) && !json_u64(mt, us)) us = 0;
    int64_t trade_ns = where.recv_ns;
    if (us != 0 && !venue_time_ns(us, 1'000, trade_ns)) return fail(where, "bitstamp: microtimestamp past the year 2262");
    if (dom::element e; !d["buy_order_id"].get(e) && !json_u64(e, buy)) buy = 0;
    if (dom::element e; !d["sell_order_id"].get(e) && !json_u64(e, sell)) sell = 0;
    SymbolBook* b = book_for(pair, where);
    Level print;
    if (!b || !convert_one(*b, {p, q}, print, where)) return false;
    push_trade(*b, where, trade_ns, print, type == 0 ? Side::kBuy : Side::kSell, out,
               buy, sell);
    return true;
  }

  std::vector<std::pair<bool, Level>> changes_;
};

}  // namespace

std::unique_ptr<VenueDecoder> make_bitstamp_decoder(SymbolTable& symbols, InputErrors& errors) {
  return std::make_unique<BitstampDecoder>(symbols, errors);
}

}  // namespace ts::crypto
