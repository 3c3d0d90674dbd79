#pragma once
// The venue decoders behind make_venue_decoder() (internal to src/ingest/crypto). Each .cpp's
// opening comment states its venue's messages and book procedure.
#include <memory>

#include "ingest/crypto/venue_decoder.h"

namespace ts::crypto {
std::unique_ptr<VenueDecoder> make_binance_decoder(SymbolTable& symbols, InputErrors& errors);
std::unique_ptr<VenueDecoder> make_coinbase_decoder(SymbolTable& symbols, InputErrors& errors);
std::unique_ptr<VenueDecoder> make_kraken_decoder(SymbolTable& symbols, InputErrors& errors);
std::unique_ptr<VenueDecoder> make_bitstamp_decoder(SymbolTable& symbols, InputErrors& errors);
std::unique_ptr<VenueDecoder> make_bitstamp_l3_decoder(SymbolTable& symbols, InputErrors& errors);
}  // namespace ts::crypto
