#pragma once
// A venue decoder's counters (venue_decoder.h: DecoderCounters) as the run's feed counters
// (ingest/source.h: FeedCounters), for every transport that decodes venue messages: capture
// files, Kafka topics and the live websocket. Pure functions; safe from any thread on data the
// caller owns.
#include "ingest/crypto/venue_decoder.h"
#include "ingest/source.h"

namespace ts::crypto {

// Adds `c` under out[venue_name(venue)]: messages, events, ignored, bad_messages, snapshots,
// sequence_gap, checksum_mismatch, checksums_verified, stale_books, dropped_before_sync,
// dropped_while_stale, unknown_orders, crossed_books, bbo_checks, bbo_mismatches.
void add_decoder_counters(Venue venue, const DecoderCounters& c, FeedCounters& out);

// Copies the numbers of `from` into `to`, not the issue texts (no allocation): for handing the
// counts of a decoder running on one thread to another under the caller's lock.
void copy_decoder_counts(const DecoderCounters& from, DecoderCounters& to);

}  // namespace ts::crypto
