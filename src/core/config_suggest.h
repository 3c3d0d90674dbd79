#pragma once
// "Did you mean": the nearest valid key to an unknown one in a config file. Valid keys are the
// ones some module asked for (present in the file or not), so the answer is always a key that
// would have been read. Filled in by Config::unread_keys() and ConfigSection::unread_keys() (they
// see the keys asked for); ask after calling them. Start-up only (a mutex; allocates).
#include <cstdint>
#include <string>

namespace ts {

// The nearest key to `unknown` (a dotted name unread_keys() returned): same section and a close
// last part ("rules.large_trade.min_notionl" → "rules.large_trade.min_notional"), else a close
// whole name ("rules.large_trad.min_notional" → "rules.large_trade.min_notional"); "" when
// nothing is close.
std::string suggest_config_key(const std::string& unknown);

// " (did you mean 'KEY'?)" or "".
std::string did_you_mean(const std::string& unknown);

// Edit distance (insertions, deletions, substitutions, adjacent transpositions). A distance of
// `limit` or more is returned as `limit` (the search stops once no smaller one is possible).
size_t edit_distance(const std::string& a, const std::string& b, size_t limit = SIZE_MAX);

}  // namespace ts
