// Kraken websocket v1: public `book` and `trade` channels. Data messages are arrays
// [channelID, {..}(, {..}), channelName, pair]; objects ({"event": ...}) are control messages.
// - Snapshot {"as": [...], "bs": [...]}: the book is replaced (a resync of a stale book).
// - Updates {"a": [...]} and/or {"b": [...]} (one object each when both sides change), levels
//   [price, volume, timestamp(, "r")]; volume 0 deletes the level. After the message is applied
//   the book is cut to the subscribed depth ("book-N"), then its CRC32 is checked against "c":
//   Kraken's documented checksum over the top 10 asks (best first) then the top 10 bids, each
//   level as price then volume with the '.' removed and leading zeros stripped, as the venue
//   writes them (the symbol's written digits are learnt from its snapshot). A mismatch is
//   counted (checksum_mismatch) and the book is stale until Kraken's next snapshot (a
//   resubscription). Every verified update counts in checksums_verified.
// - Trades [[price, volume, time, side b/s, type, misc], ...]: kTrade, aggressor from side.
// Book events carry the receive time (Kraken's per-level times are order times, not the book's).
#include <libdeflate.h>

#include <cstring>
#include <iterator>
#include <string>

#include "ingest/crypto/decimal_units.h"
#include "ingest/crypto/decoder_base.h"
#include "ingest/crypto/decoders.h"

namespace ts::crypto {

namespace {

namespace dom = simdjson::dom;

class KrakenDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Venue venue() const override { return Venue::kKraken; }

  bool decode(std::string_view json, const MessageContext& where, std::vector<Event>& out) override {
    ++counters_.messages;
    dom::element root;
    if (!parse(json, where, root)) return false;
    dom::array arr;
    if (root.get_array().get(arr)) return ignore();  // {"event": ...}
    const size_t n = arr.size();
    if (n < 4) return reject(where, InputError::kMalformedLine, "kraken: data array with fewer than 4 elements");
    std::string_view channel, pair;
    if (arr.at(n - 2).get_string().get(channel) || arr.at(n - 1).get_string().get(pair)) {
      return reject(where, InputError::kMalformedLine, "kraken: data array without channel name and pair");
    }
    if (channel.starts_with("book")) return book(arr, n, channel, pair, where, out);
    if (channel == "trade") return trade(arr, pair, where, out);
    return ignore();
  }

 private:
  bool fail(const MessageContext& w, const char* what) { return reject(w, InputError::kMalformedLine, what); }

  bool book(dom::array arr, size_t n, std::string_view channel, std::string_view pair, const MessageContext& where,
            std::vector<Event>& out) {
    SymbolBook* b = book_for(pair, where);
    if (!b) return false;
    // Gather the levels of every object first: the checksum comes with the last one.
    raw_.clear();
    side_end_.clear();
    bool snapshot = false;
    std::string_view checksum;
    size_t i = 0;
    for (dom::element el : arr) {
      if (i++ == 0 || i > n - 2) continue;
      dom::object o;
      if (el.get_object().get(o)) return fail(where, "kraken: book payload is not an object");
      for (auto field : o) {
        const std::string_view k = field.key;
        if (k == "as" || k == "bs" || k == "a" || k == "b") {
          if (k.size() == 2) snapshot = true;
          if (!raw_levels(field.value, raw_)) return fail(where, "kraken: book levels malformed");
          side_end_.push_back({k[0] == 'b', raw_.size()});
        } else if (k == "c") {
          if (field.value.get_string().get(checksum)) return fail(where, "kraken: checksum is not a string");
        }
      }
    }
    // A symbol's first message fits its units inside convert() (DecoderBase), parsing the levels
    // once: fitting them here first parsed a 1,000-level snapshot twice.
    if (!convert(*b, raw_, levels_, where)) return false;
    if (snapshot) {
      b->book.clear();
      b->depth_limit = 0;
      for (auto& texts : b->crc_text) {
        for (auto& c : texts) c.len = -1;  // the written scales are read again: forget the texts
      }
      if (auto dash = channel.find('-'); dash != std::string_view::npos) {
        for (char c : channel.substr(dash + 1)) {
          if (c >= '0' && c <= '9') b->depth_limit = b->depth_limit * 10 + size_t(c - '0');
        }
      }
      b->sync = BookSync::kLive;
      b->shown = false;
      ++counters_.snapshots;
    } else if (b->sync != BookSync::kLive) {
      if (b->sync == BookSync::kStale) ++counters_.dropped_while_stale;
      else ++counters_.dropped_before_sync;
      return true;
    }
    // PERF NOTE: a snapshot side (up to 1,000 levels, best first) is loaded in one pass; set()
    // level by level inserted each worse level at the front of the best-last vector (O(n^2)).
    // load() is clear + set() in order, so it serves where each side comes once.
    const bool load =
        snapshot && (side_end_.size() < 2 || (side_end_.size() == 2 && side_end_[0].first != side_end_[1].first));
    size_t from = 0;
    for (const auto& [bid, end] : side_end_) {
      if (load) {
        b->book.load(bid, levels_.data() + from, end - from);
      } else {
        for (size_t k = from; k < end; ++k) b->book.set(bid, levels_[k].price, levels_[k].qty);
      }
      from = end;
    }
    if (b->depth_limit) b->book.truncate(b->depth_limit);
    if (!checksum.empty()) {
      uint64_t want = 0;
      if (!json_u64_text(checksum, want)) return fail(where, "kraken: checksum is not a number");
      const uint32_t got = book_crc(*b);
      if (got == uint32_t(want)) {
        ++counters_.checksums_verified;
      } else {
        ++counters_.checksum_mismatch;
        mark_stale(*b, where, where.recv_ns, out, "checksum_mismatch",
                   "crc32 " + std::to_string(got) + " != c " + std::string(checksum));
        return true;
      }
    }
    publish_top(*b, where, where.recv_ns, out);
    return true;
  }

  static bool json_u64_text(std::string_view s, uint64_t& v) {
    if (s.empty() || s.size() > 19) return false;
    v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + uint64_t(c - '0');
    }
    return true;
  }

  // PERF NOTE: formatting 40 values per update was the largest cost of the Kraken decode (perf);
  // most updates move one or two of the 20 levels, so each level's text is kept from the last CRC
  // and reused where the same level (price and size) sits at, or one place from, the same rank.
  // The texts of this CRC go to the other of the two buffers (no copy back, no fresh array to
  // initialize: those were ~a fifth of an update's cost, callgrind).
  uint32_t book_crc(SymbolBook& b) {
    char text[20 * 2 * 44];
    int len = 0;
    const SymbolBook::CrcText* const last = b.crc_text[b.crc_last];
    SymbolBook::CrcText* const fresh = b.crc_text[b.crc_last ^ 1];
    for (bool bid : {false, true}) {
      const size_t depth = std::min<size_t>(kBookLevels, b.book.depth(bid));
      const size_t base = bid ? kBookLevels : 0;
      for (size_t i = 0; i < depth; ++i) {
        const Level& l = b.book.level(bid, i);
        // The text is a function of the level alone (the symbol's units and written scales are
        // fixed before its first CRC), so any slot holding the same level will do.
        auto cached = [&](size_t j) -> const SymbolBook::CrcText* {
          if (j >= size_t(kBookLevels)) return nullptr;  // j = i - 1 wraps for i = 0
          const SymbolBook::CrcText& c = last[base + j];
          return c.len >= 0 && c.level.price == l.price && c.level.qty == l.qty ? &c : nullptr;
        };
        const SymbolBook::CrcText* hit = cached(i);
        if (!hit) hit = cached(i - 1);
        if (!hit) hit = cached(i + 1);
        SymbolBook::CrcText& f = fresh[base + i];
        if (hit) {
          f = *hit;
        } else {
          f.level = l;
          f.len = 0;
          append_checksum_digits(l.price, b.tick, b.price_scale, f.text, f.len);
          append_checksum_digits(l.qty, b.size, b.qty_scale, f.text, f.len);
        }
        std::memcpy(text + len, f.text, size_t(f.len));
        len += f.len;
      }
      for (size_t i = depth; i < size_t(kBookLevels); ++i) fresh[base + i].len = -1;
    }
    b.crc_last ^= 1;
    // libdeflate's CRC-32 (PCLMUL) is zlib's crc32 exactly, several times faster on ~400 bytes.
    return libdeflate_crc32(0, text, size_t(len));
  }

  bool trade(dom::array arr, std::string_view pair, const MessageContext& where, std::vector<Event>& out) {
    SymbolBook* b = book_for(pair, where);
    if (!b) return false;
    dom::array prints;
    if (arr.at(1).get_array().get(prints)) return fail(where, "kraken: trade payload is not an array");
    for (dom::element t : prints) {
      dom::array f;
      std::string_view p, q, time, side;
      if (t.get_array().get(f) || f.size() < 4 || f.at(0).get_string().get(p) || f.at(1).get_string().get(q) ||
          f.at(2).get_string().get(time) || f.at(3).get_string().get(side)) {
        return fail(where, "kraken: trade entry malformed");
      }
      Level print;
      if (!convert_one(*b, {p, q}, print, where)) return false;
      int64_t ts_units = 0;
      const int64_t ts_ns = parse_units(time, Decimal{1, 9}, ts_units) ? ts_units : where.recv_ns;
      push_trade(*b, where, ts_ns, print, side == "b" ? Side::kBuy : Side::kSell, out);
    }
    return true;
  }

  std::vector<std::pair<bool, size_t>> side_end_;  // (is bid, end index in raw_) per level list
};

}  // namespace

std::unique_ptr<VenueDecoder> make_kraken_decoder(SymbolTable& symbols, InputErrors& errors) {
  return std::make_unique<KrakenDecoder>(symbols, errors);
}

}  // namespace ts::crypto
