#include "ingest/ws/ws_feed.h"

#include <algorithm>

namespace ts {

WsFeed::WsFeed(crypto::Venue venue, SymbolTable& symbols)
    : decoder_(crypto::make_venue_decoder(venue, symbols, errors_)) {}

void WsFeed::decode(const WsMessage& m, std::vector<Event>& out) {
  crypto::MessageContext ctx;
  ctx.recv_ns = m.recv_ns;
  ctx.file = "ws";
  ctx.line = ++messages_;
  ctx.is_rest = m.kind == WsMessage::Kind::kSnapshot;
  ctx.url = m.url;
  const size_t first = out.size();
  decoder_->decode(m.text, ctx, out);  // bad messages are counted by the decoder
  for (size_t i = first; i < out.size(); ++i) {
    Event& e = out[i];
    e.exch_ts_ns = std::max(e.exch_ts_ns, last_ts_ns_);
    last_ts_ns_ = e.exch_ts_ns;
    e.recv_ts_ns = 0;
  }
}

}  // namespace ts
