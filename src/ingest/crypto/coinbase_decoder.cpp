// Coinbase (Exchange / "Pro") websocket feed: `level2` (snapshot, l2update), `matches` (match,
// last_match) and `ticker`.
// - snapshot {"product_id", "bids": [[p, s]], "asks"}: the book is replaced (also a resync).
// - l2update {"product_id", "changes": [["buy"|"sell", p, s]], "time"}: sizes are the new level
//   totals (0 removes). The level2 channel carries no sequence number, so gaps cannot be seen
//   here; diffs before the first snapshot are dropped (dropped_before_sync).
// - match / last_match: kTrade; `side` is the MAKER's side, so the aggressor is the other one.
// - ticker repeats the last match (and may skip prints): counted as ignored, not a trade source.
#include <string>

#include "ingest/crypto/decoder_base.h"
#include "ingest/crypto/decoders.h"

namespace ts::crypto {

namespace {

namespace dom = simdjson::dom;

class CoinbaseDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Venue venue() const override { return Venue::kCoinbase; }

  bool decode(std::string_view json, const MessageContext& where, std::vector<Event>& out) override {
    ++counters_.messages;
    dom::element root;
    if (!parse(json, where, root)) return false;
    std::string_view type, product;
    if (root["type"].get_string().get(type)) return ignore();  // a REST body (products) or unknown
    if (type != "snapshot" && type != "l2update" && type != "match" && type != "last_match") return ignore();
    if (root["product_id"].get_string().get(product)) return fail(where, "coinbase: message without product_id");
    int64_t exch_ns = where.recv_ns;
    if (std::string_view t; !root["time"].get_string().get(t) && !parse_iso8601_ns(t, exch_ns)) {
      return fail(where, "coinbase: time is not ISO 8601");
    }
    SymbolBook* b = book_for(product, where);
    if (!b) return false;
    if (type == "snapshot") return snapshot(*b, root, where, exch_ns, out);
    if (type == "l2update") return update(*b, root, where, exch_ns, out);
    return match(*b, root, where, exch_ns, out);
  }

 private:
  bool fail(const MessageContext& w, const char* what) { return reject(w, InputError::kMalformedLine, what); }

  bool snapshot(SymbolBook& b, dom::element root, const MessageContext& where, int64_t exch_ns,
                std::vector<Event>& out) {
    raw_.clear();
    dom::element bids, asks;
    if (root["bids"].get(bids) || root["asks"].get(asks) || !raw_levels(bids, raw_)) {
      return fail(where, "coinbase: snapshot bids/asks malformed");
    }
    const size_t nbids = raw_.size();
    if (!raw_levels(asks, raw_)) return fail(where, "coinbase: snapshot asks malformed");
    if (!convert(b, raw_, levels_, where)) return false;
    b.book.load(true, levels_.data(), nbids);
    b.book.load(false, levels_.data() + nbids, levels_.size() - nbids);
    b.sync = BookSync::kLive;
    b.shown = false;
    ++counters_.snapshots;
    publish_top(b, where, exch_ns, out);
    return true;
  }

  bool update(SymbolBook& b, dom::element root, const MessageContext& where, int64_t exch_ns,
              std::vector<Event>& out) {
    dom::array changes;
    if (root["changes"].get_array().get(changes)) return fail(where, "coinbase: l2update without changes");
    raw_.clear();
    sides_.clear();
    for (dom::element c : changes) {
      dom::array f;
      std::string_view side, p, q;
      if (c.get_array().get(f) || f.size() < 3 || f.at(0).get_string().get(side) || f.at(1).get_string().get(p) ||
          f.at(2).get_string().get(q) || (side != "buy" && side != "sell")) {
        return fail(where, "coinbase: l2update change malformed");
      }
      raw_.push_back({p, q});
      sides_.push_back(side == "buy");
    }
    if (b.sync != BookSync::kLive) {  // before converting: the snapshot decides the units
      ++counters_.dropped_before_sync;
      return true;
    }
    if (!convert(b, raw_, levels_, where)) return false;
    for (size_t i = 0; i < levels_.size(); ++i) b.book.set(sides_[i], levels_[i].price, levels_[i].qty);
    publish_top(b, where, exch_ns, out);
    return true;
  }

  bool match(SymbolBook& b, dom::element root, const MessageContext& where, int64_t exch_ns,
             std::vector<Event>& out) {
    std::string_view p, q, side;
    if (root["price"].get_string().get(p) || root["size"].get_string().get(q) ||
        root["side"].get_string().get(side) || (side != "buy" && side != "sell")) {
      return fail(where, "coinbase: match without price/size/side");
    }
    Level print;
    if (!convert_one(b, {p, q}, print, where)) return false;
    push_trade(b, where, exch_ns, print, side == "buy" ? Side::kSell : Side::kBuy, out);
    return true;
  }

  std::vector<bool> sides_;
};

}  // namespace

std::unique_ptr<VenueDecoder> make_coinbase_decoder(SymbolTable& symbols, InputErrors& errors) {
  return std::make_unique<CoinbaseDecoder>(symbols, errors);
}

}  // namespace ts::crypto
