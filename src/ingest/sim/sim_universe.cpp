#include "ingest/sim/sim_universe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ingest/sim/sim_random.h"

namespace ts::sim {

namespace {
constexpr uint64_t kUniverseSeed = 0x7153'2023'0201ull;

std::string code(int number, const char* suffix) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06d.%s", number, suffix);
  return buf;
}
}  // namespace

std::vector<UniverseEntry> make_universe(int count, double st_fraction) {
  Rng rng(kUniverseSeed);
  std::vector<UniverseEntry> out;
  out.reserve(size_t(count));
  int sh_main = 0, sz_main = 0, chinext = 0, star = 0;
  for (int i = 0; i < count; ++i) {
    UniverseEntry e;
    const double board = rng.uniform();
    double price_scale = 1.0;
    bool main_board = false;
    if (board < 0.12 && star < 999) {
      e.name = code(688001 + star++, "SH");
      price_scale = 2.5;
    } else if (board < 0.27 && chinext < 1999) {
      e.name = code(300001 + chinext++, "SZ");
      price_scale = 1.5;
    } else if (board < 0.60 && sz_main < 3999) {
      e.name = code(1 + sz_main++, "SZ");
      main_board = true;
    } else {
      e.name = code(600000 + sh_main++, "SH");
      main_board = true;
    }
    const double cny = std::clamp(price_scale * std::exp(std::log(11.0) + 0.75 * rng.normal()), 3.0, 300.0);
    e.prev_close = Price(std::llround(cny * 100.0));
    e.is_st = main_board && rng.chance(st_fraction);
    e.activity = std::clamp(std::exp(0.9 * rng.normal()), 0.1, 10.0);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ts::sim
