#pragma once
// VolumeProfile: a symbol's expected traded volume and trade count per 10 s for each time of day
// (an intraday profile), against which volume_z and trade_count_z are measured
// (docs/features.md). It has two parts:
//   - the symbol's level: EWMAs of its 10 s volume and count divided by the market's default
//     shape at that time (a U over the continuous session for A-shares and US, flat for
//     crypto), so one busy opening minute says what the whole day should look like;
//   - learned bins: per 5-minute bin of the exchange-local day, EWMAs of the 10 s volume and
//     count seen in that bin, today and (through a state file) on earlier days.
// The expectation of a bin blends the two: w = n / (n + prior_buckets) of the learned bin,
// the rest from shape × level. Standard deviations blend the same way.
// ProfileStore keeps profiles by symbol name between runs: the versioned state file of
// --state-in / --state-out (docs/formats.md).
// Threading: a VolumeProfile belongs to the shard that owns its symbol; a ProfileStore is filled
// on one thread (load, or after the shards have stopped) and read-only while shards run.
#include <cstdint>
#include <map>
#include <string>

#include "core/instrument.h"
#include "core/status.h"

namespace ts {

constexpr int kProfileBinSeconds = 300;
constexpr int kProfileBins = 86400 / kProfileBinSeconds;  // 288
constexpr int kProfileStateVersion = 1;

// The default shape of `market` for bin `bin` (0..287 of the exchange-local day): a multiplier of
// the symbol's average 10 s volume, averaging 1 over the market's continuous bins; 1 outside them
// and for crypto / unknown markets.
double profile_default_shape(MarketKind market, int bin);

// West's incremental EWMA with weight max(1/n, a): a plain mean while n < 1/a.
struct ProfileStat {
  double mean = 0, var = 0;
  void add(double x, double a) {
    const double d = x - mean;
    mean += a * d;
    var = (1 - a) * (var + a * d * d);
  }
};

struct ProfileBin {
  uint32_t n = 0;  // 10 s buckets learned in this bin (all days)
  ProfileStat vol, cnt;
};

struct ProfileParams {
  int prior_buckets = 30;      // weight of the shape × level part, in buckets
  int bin_memory_buckets = 150;  // a bin's EWMA span (5 days × 30 buckets of 10 s)
  int level_memory_buckets = 360;  // the level's EWMA span (1 hour of 10 s buckets)
};

struct ProfileExpectation {
  double vol_mean = 0, vol_sd = 0, cnt_mean = 0, cnt_sd = 0;
};

struct VolumeProfile {
  MarketKind market = MarketKind::kUnknown;
  uint64_t level_n = 0;        // buckets in the level
  ProfileStat level_vol, level_cnt;  // of volume / shape and count / shape
  ProfileBin bins[kProfileBins];

  // Learns one completed 10 s bucket of bin `bin`.
  void add(int bin, double volume, double count, const ProfileParams& p);
  // The expectation for a 10 s window in bin `bin`.
  ProfileExpectation expect(int bin, const ProfileParams& p) const;
};

class ProfileStore {
 public:
  // Reads a state file; the store is unchanged on error. Errors name the file and, for a bad
  // line, the line: cannot open (kIoError), not a ticksentry state file, another version, a
  // malformed line (kInvalidArgument).
  Status load(const std::string& path);
  Status parse(const std::string& text, const std::string& name);
  // Writes every profile (to path.tmp, then renamed over path).
  Status save(const std::string& path) const;
  std::string to_text() const;

  const VolumeProfile* find(const std::string& symbol) const;
  void put(const std::string& symbol, const VolumeProfile& p) { profiles_[symbol] = p; }
  size_t size() const { return profiles_.size(); }

 private:
  std::map<std::string, VolumeProfile> profiles_;
};

}  // namespace ts
