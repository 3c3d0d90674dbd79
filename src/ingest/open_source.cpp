#include "ingest/open_source.h"

#include <functional>
#include <map>
#include <optional>

#include "ingest/crypto/crypto_source.h"
#include "ingest/csv_source.h"
#include "ingest/lobster_source.h"
#include "ingest/mapped/mapped_source.h"
#include "ingest/merge_source.h"
#include "ingest/sse_l3_source.h"
#include "ingest/sse_source.h"
#include "ingest/szse_snapshot_source.h"
#include "ingest/szse_trade_source.h"

namespace ts {

namespace {

// A source with feed counters known when it opened (SZSE trades: the file is read whole then,
// its cancels counted).
class CountedSource final : public Source {
 public:
  CountedSource(std::unique_ptr<Source> inner, std::string feed, std::map<std::string, uint64_t> counters)
      : inner_(std::move(inner)), feed_(std::move(feed)), counters_(std::move(counters)) {}
  size_t next_batch(std::span<Event> out) override { return inner_->next_batch(out); }
  bool done() const override { return inner_->done(); }
  std::string describe() const override { return inner_->describe(); }
  void feed_counters(FeedCounters& out) const override {
    for (const auto& [k, v] : counters_) out[feed_][k] += v;
  }

 private:
  std::unique_ptr<Source> inner_;
  std::string feed_;
  std::map<std::string, uint64_t> counters_;
};

Result<std::unique_ptr<Source>> open_szse_trades(const std::string& path, SymbolTable& symbols, InputErrors& errors) {
  SzseTradeCounts c;
  auto s = make_szse_trade_source(path, symbols, errors, &c);
  if (!s) return s.status();
  return std::unique_ptr<Source>(std::make_unique<CountedSource>(
      std::move(s).value(), "szse-trades",
      std::map<std::string, uint64_t>{
          {"trades", c.trades}, {"cancels", c.cancels}, {"cancel_qty", static_cast<uint64_t>(c.cancel_qty)}}));
}

}  // namespace

const std::vector<std::string>& source_formats() {
  static const std::vector<std::string> kFormats = {
      "lobster",      "sse-l2",        "sse-l3",        "szse-l2",     "szse-trades",   "csv",         "mapped",
      "crypto",       "binance-json",  "coinbase-json", "kraken-json", "bitstamp-json", "bitstamp-l3"};
  return kFormats;
}

std::string join_formats(const std::string& sep) {
  std::string out;
  for (const auto& f : source_formats()) out += (out.empty() ? "" : sep) + f;
  return out;
}

Result<std::unique_ptr<Source>> open_source(const std::string& format, const std::vector<std::string>& paths,
                                            SymbolTable& symbols, InputErrors& errors, const std::string& layout) {
  if (format != "mapped" && !layout.empty()) {
    return Status(StatusCode::kInvalidArgument, "--layout is for --format mapped, not " + format);
  }
  // Crypto captures: all paths are ONE stream for one decoder (a websocket file and its REST
  // snapshot file are merged by receive time inside the source).
  if (crypto::Venue venue; format == "crypto" || crypto::parse_venue(format, venue)) {
    std::optional<crypto::Venue> v;
    if (format != "crypto") v = venue;
    auto s = crypto::open_crypto_source(paths, v, symbols, errors);
    if (!s) return s.status();
    return std::unique_ptr<Source>(std::move(s).value());
  }
  using Factory = std::function<Result<std::unique_ptr<Source>>(const std::string&, SymbolTable&, InputErrors&)>;
  Factory factory;
  mapped::Layout mapping;
  if (format == "mapped") {
    if (layout.empty()) {
      std::string shipped;
      for (const auto& b : mapped::builtin_layouts()) shipped += (shipped.empty() ? "" : ", ") + std::string(b.name);
      return Status(StatusCode::kInvalidArgument,
                    "--format mapped needs --layout FILE.toml or a shipped layout's name (" + shipped + ")");
    }
    auto loaded = mapped::load_layout(layout);
    if (!loaded) return loaded.status();
    mapping = std::move(loaded).value();
    factory = [&mapping](const std::string& p, SymbolTable& s, InputErrors& e) { return make_mapped_source(mapping, p, s, e); };
  } else if (format == "lobster") {
    factory = &make_lobster_source;
  } else if (format == "sse-l2") {
    factory = [](const std::string& p, SymbolTable& s, InputErrors& e) { return make_sse_source(p, s, e); };
  } else if (format == "sse-l3") {
    factory = &make_sse_l3_source;
  } else if (format == "szse-l2") {
    factory = &make_szse_snapshot_source;
  } else if (format == "szse-trades") {
    factory = &open_szse_trades;
  } else if (format == "csv") {
    factory = &make_csv_source;
  } else {
    return Status(StatusCode::kInvalidArgument,
                  "unknown input format \"" + format + "\" (known: " + join_formats(", ") + ")");
  }
  if (paths.empty()) return Status(StatusCode::kInvalidArgument, "no input paths for format " + format);
  std::vector<std::unique_ptr<Source>> sources;
  for (const auto& p : paths) {
    auto s = factory(p, symbols, errors);
    if (!s) return s.status();
    sources.push_back(std::move(s).value());
  }
  if (sources.size() == 1) return std::move(sources.front());
  std::string desc = format + " merge of " + std::to_string(sources.size()) + " inputs";
  return std::unique_ptr<Source>(std::make_unique<MergeSource>(std::move(sources), MergeOrder::kTimeThenInput, desc));
}

}  // namespace ts
