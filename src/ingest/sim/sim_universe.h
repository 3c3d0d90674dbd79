#pragma once
// The simulated universe: A-share-like names, previous closes, ST flags and activity weights.
// Depends only on the number of symbols (not on the flow seed), so names are stable across runs.
#include <string>
#include <vector>

#include "core/event.h"

namespace ts::sim {

struct UniverseEntry {
  std::string name;       // "600123.SH", "000456.SZ", "300789.SZ", "688012.SH"
  Price prev_close = 0;   // ticks of 0.01 CNY, 3..300 CNY (STAR and ChiNext skew higher)
  bool is_st = false;     // only on main-board names
  double activity = 1.0;  // relative event rate (lognormal, 0.1x..10x of the median)
};

// `st_fraction` of the main-board names are flagged ST.
std::vector<UniverseEntry> make_universe(int count, double st_fraction);

}  // namespace ts::sim
