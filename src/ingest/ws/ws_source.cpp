#include "ingest/ws/ws_source.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "ingest/crypto/feed_counters.h"
#include "ingest/ws/ws_feed.h"

namespace ts {

struct WsSource::Impl {
  std::string venue_name;
  std::string url;
  // The decoder counts bad input in the feed's own InputErrors (client thread only), never in the
  // caller's, which the consumer thread reads; the counts reach it through `pending_errors`
  // (hand_on_errors).
  std::unique_ptr<WsFeed> feed;
  std::unique_ptr<WsClient> client;
  // Client thread only.
  std::vector<Event> scratch;
  // Shared: events decoded, not yet handed on, and the decoder's counts after the last message.
  mutable std::mutex mu;
  std::vector<Event> queue;
  crypto::DecoderCounters counts;
  InputErrors pending_errors;  // quiet: the feed already logged them
  // Client thread only: the feed's errors as of the last message.
  InputErrors seen_errors;
  // Consumer thread only.
  InputErrors* sink = nullptr;
  std::vector<Event> taking;
  size_t taking_at = 0;

  void on_message(const WsMessage& m) {
    scratch.clear();
    feed->decode(m, scratch);
    std::lock_guard<std::mutex> lock(mu);
    queue.insert(queue.end(), scratch.begin(), scratch.end());
    crypto::copy_decoder_counts(feed->counters(), counts);
    // The errors this message added (a few at most), counted again, quietly, for the consumer.
    const InputErrors& seen_now = feed->errors();
    for (size_t k = 0; k < kInputErrorCount; ++k) {
      const auto kind = static_cast<InputError>(k);
      for (uint64_t n = seen_errors.count(kind); n < seen_now.count(kind); ++n) {
        pending_errors.report(kind, "ws", feed->messages(), "");
      }
    }
    seen_errors = seen_now;
  }

  // Consumer thread, under `mu`: hands the bad-input counts added since the last call on.
  void hand_on_errors() {
    if (pending_errors.total() == 0) return;
    sink->merge(pending_errors);
    pending_errors = InputErrors();
    pending_errors.set_quiet(true);
  }
};

WsSource::WsSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WsSource::~WsSource() { stop(); }

Result<std::unique_ptr<WsSource>> WsSource::open(const std::string& venue, WsClientOptions options,
                                                 SymbolTable& symbols, InputErrors& errors) {
  crypto::Venue v{};
  if (!crypto::parse_venue(venue, v)) {
    return Status(StatusCode::kInvalidArgument,
                  "--venue " + venue + ": expected binance, coinbase, kraken, bitstamp or bitstamp-l3");
  }
  auto impl = std::make_unique<Impl>();
  impl->venue_name = crypto::venue_name(v);
  impl->url = options.url;
  impl->sink = &errors;
  impl->pending_errors.set_quiet(true);
  impl->feed = std::make_unique<WsFeed>(v, symbols);
  Impl* raw = impl.get();
  auto client = WsClient::open(std::move(options), [raw](const WsMessage& m) { raw->on_message(m); });
  if (!client) return client.status();
  impl->client = std::move(client).value();
  std::unique_ptr<WsSource> s(new WsSource(std::move(impl)));
  s->impl_->client->start();
  return s;
}

size_t WsSource::next_batch(std::span<Event> out) {
  Impl& m = *impl_;
  if (m.taking_at == m.taking.size()) {
    m.taking.clear();
    m.taking_at = 0;
    std::lock_guard<std::mutex> lock(m.mu);
    m.taking.swap(m.queue);  // both keep their capacity: no allocation in steady state
    m.hand_on_errors();
  }
  const size_t n = std::min(out.size(), m.taking.size() - m.taking_at);
  std::copy_n(m.taking.begin() + static_cast<std::ptrdiff_t>(m.taking_at), n, out.begin());
  m.taking_at += n;
  return n;
}

bool WsSource::done() const {
  if (!impl_->client->finished() || impl_->taking_at < impl_->taking.size()) return false;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hand_on_errors();
  return impl_->queue.empty();
}

std::string WsSource::describe() const { return "ws " + impl_->venue_name + " " + impl_->url; }

void WsSource::feed_counters(FeedCounters& out) const {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    crypto::add_decoder_counters(impl_->feed->venue(), impl_->counts, out);
  }
  const WsClientStats& c = impl_->client->stats();
  auto& ws = out["ws"];
  ws["connections"] += c.connections.load();
  ws["disconnects"] += c.disconnects.load();
  ws["failed_connects"] += c.failed_attempts.load();
  ws["messages"] += c.messages.load();
  ws["snapshots"] += c.snapshots.load();
  ws["bytes"] += c.bytes.load();
  ws["tls_failures"] += c.tls_failures.load();
}
void WsSource::stop() {
  if (impl_ && impl_->client) impl_->client->stop();
}
const crypto::DecoderCounters& WsSource::counters() const { return impl_->feed->counters(); }
const WsClientStats& WsSource::client_stats() const { return impl_->client->stats(); }
std::string WsSource::last_error() const { return impl_->client->last_error(); }
bool WsSource::fatal() const { return impl_->client->fatal(); }

}  // namespace ts
