#include "ingest/crypto/crypto_source.h"

#include <algorithm>
#include <string_view>

#include "core/log.h"
#include "ingest/crypto/capture_line.h"
#include "ingest/crypto/feed_counters.h"
#include "ingest/line_reader.h"

namespace ts::crypto {

namespace {

// One input file with its next message line parsed ahead (for the receive-time merge).
struct Input {
  std::unique_ptr<ingest::LineReader> reader;
  ingest::Line line;
  CaptureLine cap;
  bool has = false;   // `line`/`cap` hold the next record
  bool ended = false;
  uint64_t records = 0;
};

std::optional<Venue> venue_of_url(std::string_view url) {
  if (url.find("binance") != std::string_view::npos) return Venue::kBinance;
  if (url.find("coinbase") != std::string_view::npos) return Venue::kCoinbase;
  if (url.find("kraken") != std::string_view::npos) return Venue::kKraken;
  if (url.find("bitstamp") != std::string_view::npos) return Venue::kBitstamp;
  return std::nullopt;
}

std::optional<Venue> venue_of_message(const CaptureLine& c) {
  const std::string_view j = c.json;
  if (!c.event.empty()) return Venue::kBitstampL3;
  if (j.find("\"stream\"") != std::string_view::npos || j.find("\"depthUpdate\"") != std::string_view::npos ||
      j.find("\"lastUpdateId\"") != std::string_view::npos) {
    return Venue::kBinance;
  }
  if (j.find("\"product_id\"") != std::string_view::npos) return Venue::kCoinbase;
  if (j.find("\"bts:") != std::string_view::npos || j.find("\"diff_order_book") != std::string_view::npos ||
      j.find("\"live_trades") != std::string_view::npos) {
    return Venue::kBitstamp;
  }
  if (j.find("\"channelName\"") != std::string_view::npos || j.find("\"book-") != std::string_view::npos ||
      j.find("\"systemStatus\"") != std::string_view::npos) {
    return Venue::kKraken;
  }
  return std::nullopt;
}

}  // namespace

struct CryptoSource::Impl {
  std::vector<Input> inputs;
  std::unique_ptr<VenueDecoder> decoder;
  InputErrors* errors = nullptr;
  std::vector<Event> pending;  // decoded, not yet handed out
  size_t pending_at = 0;
  int64_t last_ts = 0;  // exch_ts_ns of the last event handed on
  std::string description;
  bool done = false;
  bool summarized = false;

  // Reads `in`'s next data line into in.cap (skipping blanks, sent and connect lines).
  void advance(Input& in) {
    in.has = false;
    while (!in.ended && in.reader->next(in.line)) {
      if (in.line.has_garbage) {
        ingest::report_line_error(*errors, *in.reader, in.line, InputError::kBinaryGarbage, "control bytes in a line");
        continue;
      }
      in.cap = parse_capture_line(in.line.text);
      switch (in.cap.kind) {
        case CaptureKind::kBlank:
        case CaptureKind::kSent:
        case CaptureKind::kConnect: continue;
        case CaptureKind::kBad:
          ingest::report_line_error(*errors, *in.reader, in.line, InputError::kMalformedLine, in.cap.why);
          continue;
        case CaptureKind::kMessage:
        case CaptureKind::kRest: in.has = true; ++in.records; return;
      }
    }
    if (!in.ended) {
      in.ended = true;
      if (in.records == 0) ingest::report_if_empty(*errors, *in.reader, 0);
    }
  }

  // Decodes the next line (earliest receive time first) into `pending`; false at the end.
  bool decode_next() {
    Input* best = nullptr;
    for (Input& in : inputs) {
      if (!in.has) continue;
      if (!best || (in.cap.recv_ns != 0 && best->cap.recv_ns != 0 && in.cap.recv_ns < best->cap.recv_ns)) best = &in;
    }
    if (!best) return false;
    MessageContext ctx;
    ctx.recv_ns = best->cap.recv_ns;
    ctx.file = best->reader->file_name();
    ctx.line = best->line.number;
    ctx.is_rest = best->cap.kind == CaptureKind::kRest;
    ctx.url = best->cap.url;
    ctx.event_name = best->cap.event;
    const size_t before = pending.size();
    if (!decoder->decode(best->cap.json, ctx, pending) && best->line.unterminated) {
      // A cut last line is a truncated file, not a malformed message (already counted once).
    }
    for (size_t i = before; i < pending.size(); ++i) {
      Event& e = pending[i];
      e.exch_ts_ns = std::max(e.exch_ts_ns, last_ts);
      last_ts = e.exch_ts_ns;
    }
    advance(*best);
    return true;
  }

  void summarize() {
    if (summarized) return;
    summarized = true;
    const DecoderCounters& c = decoder->counters();
    spdlog::info("{}: {} messages, {} events, {} ignored, {} bad, {} snapshots, sequence_gap {}, "
                 "checksum_mismatch {} (verified {}), stale {}, dropped before sync {}, while stale {}, "
                 "unknown orders {}, crossed {}, bbo checks {} (mismatches {})",
                 description, c.messages, c.events, c.ignored, c.bad_messages, c.snapshots, c.sequence_gap,
                 c.checksum_mismatch, c.checksums_verified, c.stale_books, c.dropped_before_sync,
                 c.dropped_while_stale, c.unknown_orders, c.crossed_books, c.bbo_checks, c.bbo_mismatches);
  }
};

CryptoSource::CryptoSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CryptoSource::~CryptoSource() = default;

size_t CryptoSource::next_batch(std::span<Event> out) {
  Impl& m = *impl_;
  size_t n = 0;
  while (n < out.size()) {
    if (m.pending_at == m.pending.size()) {
      m.pending.clear();
      m.pending_at = 0;
      if (!m.decode_next()) {
        m.done = true;
        m.summarize();
        break;
      }
      continue;
    }
    const size_t take = std::min(out.size() - n, m.pending.size() - m.pending_at);
    std::copy_n(m.pending.begin() + std::ptrdiff_t(m.pending_at), take, out.begin() + std::ptrdiff_t(n));
    m.pending_at += take;
    n += take;
  }
  return n;
}

bool CryptoSource::done() const { return impl_->done; }
std::string CryptoSource::describe() const { return impl_->description; }
const DecoderCounters& CryptoSource::counters() const { return impl_->decoder->counters(); }
Venue CryptoSource::venue() const { return impl_->decoder->venue(); }
void CryptoSource::feed_counters(FeedCounters& out) const {
  add_decoder_counters(impl_->decoder->venue(), impl_->decoder->counters(), out);
}

Result<std::optional<Venue>> detect_capture_venue(const std::string& path) {
  InputErrors quiet;
  quiet.set_quiet(true);
  auto r = ingest::LineReader::open(path, quiet);
  if (!r) return r.status();
  ingest::Line line;
  for (int i = 0; i < 50 && r.value()->next(line); ++i) {
    const CaptureLine c = parse_capture_line(line.text);
    if (!c.url.empty()) {
      if (auto v = venue_of_url(c.url)) return v;
    }
    if (c.kind == CaptureKind::kMessage || c.kind == CaptureKind::kRest) {
      if (auto v = venue_of_message(c)) return v;
    }
  }
  return std::optional<Venue>{};
}

Result<std::unique_ptr<CryptoSource>> open_crypto_source(const std::vector<std::string>& paths,
                                                         std::optional<Venue> venue, SymbolTable& symbols,
                                                         InputErrors& errors) {
  if (paths.empty()) return Status(StatusCode::kInvalidArgument, "no input paths for a crypto capture");
  if (!venue) {
    auto v = detect_capture_venue(paths.front());
    if (!v) return v.status();
    if (!v.value()) {
      return Status(StatusCode::kInvalidArgument,
                    "cannot tell the venue of " + paths.front() +
                        " from its first lines; give --format binance-json|coinbase-json|kraken-json|bitstamp-json|"
                        "bitstamp-l3");
    }
    venue = v.value();
  }
  std::vector<std::unique_ptr<ingest::LineReader>> readers;
  for (const auto& p : paths) {
    auto r = ingest::LineReader::open(p, errors);
    if (!r) return r.status();
    readers.push_back(std::move(r).value());
  }
  return open_crypto_source(std::move(readers), *venue, symbols, errors);
}

Result<std::unique_ptr<CryptoSource>> open_crypto_source(std::vector<std::unique_ptr<ingest::LineReader>> readers,
                                                         Venue venue, SymbolTable& symbols, InputErrors& errors) {
  if (readers.empty()) return Status(StatusCode::kInvalidArgument, "no input files for a crypto capture");
  auto impl = std::make_unique<CryptoSource::Impl>();
  impl->errors = &errors;
  impl->decoder = make_venue_decoder(venue, symbols, errors);
  impl->description = std::string(venue_name(venue)) + " capture";
  for (auto& r : readers) {
    Input in;
    in.reader = std::move(r);
    impl->description += " " + std::string(in.reader->file_name());
    impl->inputs.push_back(std::move(in));
  }
  for (Input& in : impl->inputs) impl->advance(in);
  return std::unique_ptr<CryptoSource>(new CryptoSource(std::move(impl)));
}

}  // namespace ts::crypto
