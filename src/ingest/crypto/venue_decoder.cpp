#include "ingest/crypto/venue_decoder.h"

#include "ingest/crypto/decoders.h"

namespace ts::crypto {

const char* venue_name(Venue v) {
  switch (v) {
    case Venue::kBinance: return "binance";
    case Venue::kCoinbase: return "coinbase";
    case Venue::kKraken: return "kraken";
    case Venue::kBitstamp: return "bitstamp";
    case Venue::kBitstampL3: return "bitstamp-l3";
  }
  return "?";
}

const char* venue_prefix(Venue v) {
  switch (v) {
    case Venue::kBinance: return "BINANCE";
    case Venue::kCoinbase: return "COINBASE";
    case Venue::kKraken: return "KRAKEN";
    case Venue::kBitstamp:
    case Venue::kBitstampL3: return "BITSTAMP";
  }
  return "?";
}

bool parse_venue(std::string_view name, Venue& out) {
  if (name.ends_with("-json")) name.remove_suffix(5);
  for (int i = 0; i < kVenueCount; ++i) {
    if (name == venue_name(Venue(i))) {
      out = Venue(i);
      return true;
    }
  }
  return false;
}

std::unique_ptr<VenueDecoder> make_venue_decoder(Venue venue, SymbolTable& symbols, InputErrors& errors) {
  switch (venue) {
    case Venue::kBinance: return make_binance_decoder(symbols, errors);
    case Venue::kCoinbase: return make_coinbase_decoder(symbols, errors);
    case Venue::kKraken: return make_kraken_decoder(symbols, errors);
    case Venue::kBitstamp: return make_bitstamp_decoder(symbols, errors);
    case Venue::kBitstampL3: return make_bitstamp_l3_decoder(symbols, errors);
  }
  return nullptr;
}

}  // namespace ts::crypto
