#include "ingest/crypto/feed_counters.h"

namespace ts::crypto {

namespace {

// Every numeric field of DecoderCounters with its name (copy_decoder_counts lists the same).
template <class Fn>
void for_each_count(const DecoderCounters& c, Fn&& fn) {
  fn("messages", c.messages);
  fn("events", c.events);
  fn("ignored", c.ignored);
  fn("bad_messages", c.bad_messages);
  fn("snapshots", c.snapshots);
  fn("sequence_gap", c.sequence_gap);
  fn("checksum_mismatch", c.checksum_mismatch);
  fn("checksums_verified", c.checksums_verified);
  fn("stale_books", c.stale_books);
  fn("dropped_before_sync", c.dropped_before_sync);
  fn("dropped_while_stale", c.dropped_while_stale);
  fn("unknown_orders", c.unknown_orders);
  fn("crossed_books", c.crossed_books);
  fn("bbo_checks", c.bbo_checks);
  fn("bbo_mismatches", c.bbo_mismatches);
}

}  // namespace

void add_decoder_counters(Venue venue, const DecoderCounters& c, FeedCounters& out) {
  auto& feed = out[venue_name(venue)];
  for_each_count(c, [&](const char* name, uint64_t v) { feed[name] += v; });
}

void copy_decoder_counts(const DecoderCounters& from, DecoderCounters& to) {
  to.messages = from.messages;
  to.events = from.events;
  to.ignored = from.ignored;
  to.bad_messages = from.bad_messages;
  to.snapshots = from.snapshots;
  to.sequence_gap = from.sequence_gap;
  to.checksum_mismatch = from.checksum_mismatch;
  to.checksums_verified = from.checksums_verified;
  to.stale_books = from.stale_books;
  to.dropped_before_sync = from.dropped_before_sync;
  to.dropped_while_stale = from.dropped_while_stale;
  to.unknown_orders = from.unknown_orders;
  to.crossed_books = from.crossed_books;
  to.bbo_checks = from.bbo_checks;
  to.bbo_mismatches = from.bbo_mismatches;
}

}  // namespace ts::crypto
