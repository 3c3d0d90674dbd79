#pragma once
// Exact decimal text → integer units (ticks, size increments) for the crypto decoders, without
// going through Decimal objects or doubles: "0.35210000" at a tick of 0.0001 is 3521.
// Pure functions; safe from any thread.
#include <cstdint>
#include <string_view>

#include "core/decimal.h"

namespace ts::crypto {

// Digits written after the point: "0.35210000" → 8, "12" → 0; -1 when `text` is not a plain
// non-negative decimal ("1e-5", "-1", "", "1.2.3").
int written_scale(std::string_view text);

// `text` (plain non-negative decimal) as a whole count of `unit`. False when the text is not a
// decimal, is not a whole multiple of the unit ("0.35215" at 0.0001) or the count exceeds int64.
bool parse_units(std::string_view text, const Decimal& unit, int64_t& out);

// A JSON number that carries float noise (Bitstamp's 2015 trades: 1.7885566900000001) rounded to
// the nearest unit. False when the value is negative, not finite or beyond int64.
bool round_units(double value, const Decimal& unit, int64_t& out);

// The digit string Kraken's checksum uses for a value of `count` units written with
// `written_scale` fractional digits: the decimal without its point and leading zeros
// (count 5 of 1e-8 written with 8 digits → "5"; 56218.3 at 0.1 written with 5 → "5621830000").
// Appends to `out` (at most 40 characters); false when the value cannot be written exactly
// with that many digits.
bool append_checksum_digits(int64_t count, const Decimal& unit, int written_scale, char* out, int& len);

}  // namespace ts::crypto
