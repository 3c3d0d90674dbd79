#include "features/volume_profile.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace ts {

namespace {

// Shape of a continuous session of `minutes` (trading time, breaks removed) at minute t: a U
// (busy open, quiet middle, busier close) plus an optional small bump after a lunch break.
// Rough fits to typical A-share and US intraday volume; the learned bins replace them per symbol.
struct ShapeSpec {
  int open_s[2], close_s[2];  // up to two continuous segments, local seconds of the day
  int segments;
  double open_amp, open_tau_min, close_amp, close_tau_min, reopen_amp, reopen_tau_min;
};

constexpr ShapeSpec kChinaAShape{{9 * 3600 + 1800, 13 * 3600}, {11 * 3600 + 1800, 14 * 3600 + 57 * 60}, 2,
                                 2.5, 12, 0.8, 10, 0.4, 8};
constexpr ShapeSpec kUsShape{{9 * 3600 + 1800, 0}, {16 * 3600, 0}, 1, 2.0, 15, 1.5, 12, 0, 1};

std::array<double, kProfileBins> build_shape(const ShapeSpec& s) {
  std::array<double, kProfileBins> shape;
  shape.fill(1.0);
  double total_min = 0;
  for (int k = 0; k < s.segments; ++k) total_min += (s.close_s[k] - s.open_s[k]) / 60.0;
  double sum = 0;
  int count = 0;
  std::vector<int> in_session;
  for (int b = 0; b < kProfileBins; ++b) {
    const int mid_s = b * kProfileBinSeconds + kProfileBinSeconds / 2;
    double before = 0;  // trading minutes before this segment
    for (int k = 0; k < s.segments; ++k) {
      if (mid_s >= s.open_s[k] && mid_s < s.close_s[k]) {
        const double t = before + (mid_s - s.open_s[k]) / 60.0;
        double v = 1 + s.open_amp * std::exp(-t / s.open_tau_min) +
                   s.close_amp * std::exp(-(total_min - t) / s.close_tau_min);
        if (k > 0) v += s.reopen_amp * std::exp(-(mid_s - s.open_s[k]) / 60.0 / s.reopen_tau_min);
        shape[size_t(b)] = v;
        sum += v;
        ++count;
        in_session.push_back(b);
      }
      before += (s.close_s[k] - s.open_s[k]) / 60.0;
    }
  }
  for (int b : in_session) shape[size_t(b)] *= count / sum;  // mean 1 over the session's bins
  return shape;
}

}  // namespace

double profile_default_shape(MarketKind market, int bin) {
  static const std::array<double, kProfileBins> cn = build_shape(kChinaAShape);
  static const std::array<double, kProfileBins> us = build_shape(kUsShape);
  if (bin < 0 || bin >= kProfileBins) return 1.0;
  switch (market) {
    case MarketKind::kChinaA: return cn[size_t(bin)];
    case MarketKind::kUs: return us[size_t(bin)];
    default: return 1.0;
  }
}

void VolumeProfile::add(int bin, double volume, double count, const ProfileParams& p) {
  const double shape = profile_default_shape(market, bin);
  ++level_n;
  const double al = std::max(1.0 / double(level_n), 1.0 / p.level_memory_buckets);
  level_vol.add(volume / shape, al);
  level_cnt.add(count / shape, al);
  ProfileBin& b = bins[bin];
  ++b.n;
  const double ab = std::max(1.0 / double(b.n), 1.0 / p.bin_memory_buckets);
  b.vol.add(volume, ab);
  b.cnt.add(count, ab);
}

ProfileExpectation VolumeProfile::expect(int bin, const ProfileParams& p) const {
  const double shape = profile_default_shape(market, bin);
  const ProfileBin& b = bins[bin];
  const double w = double(b.n) / (double(b.n) + p.prior_buckets);
  ProfileExpectation e;
  e.vol_mean = w * b.vol.mean + (1 - w) * shape * level_vol.mean;
  e.vol_sd = w * std::sqrt(b.vol.var) + (1 - w) * shape * std::sqrt(level_vol.var);
  e.cnt_mean = w * b.cnt.mean + (1 - w) * shape * level_cnt.mean;
  e.cnt_sd = w * std::sqrt(b.cnt.var) + (1 - w) * shape * std::sqrt(level_cnt.var);
  return e;
}

// --- The state file. ---

namespace {

constexpr const char* kMagic = "ticksentry-state";

Status bad_line(const std::string& name, int line, const std::string& what) {
  return {StatusCode::kInvalidArgument, "state file " + name + ":" + std::to_string(line) + ": " + what};
}

bool finite_all(std::initializer_list<double> v) {
  for (double x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

}  // namespace

Status ProfileStore::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {StatusCode::kIoError, "state file " + path + ": cannot open"};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

Status ProfileStore::parse(const std::string& text, const std::string& name) {
  std::map<std::string, VolumeProfile> out;
  std::istringstream in(text);
  std::string line;
  int ln = 0;
  bool header = false;
  VolumeProfile* cur = nullptr;
  while (std::getline(in, line)) {
    ++ln;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string word;
    f >> word;
    if (!header) {
      int version = 0;
      if (word != kMagic) return {StatusCode::kInvalidArgument, "state file " + name + ": not a ticksentry state file (first line must be \"" + std::string(kMagic) + " " + std::to_string(kProfileStateVersion) + "\")"};
      if (!(f >> version)) return bad_line(name, ln, "no version after " + std::string(kMagic));
      if (version != kProfileStateVersion) {
        return {StatusCode::kInvalidArgument, "state file " + name + ": version " + std::to_string(version) +
                                                  ", this build reads version " + std::to_string(kProfileStateVersion)};
      }
      header = true;
      continue;
    }
    std::string rest;
    if (word == "bin_seconds") {
      int s = 0;
      if (!(f >> s) || (f >> rest)) return bad_line(name, ln, "bin_seconds needs one integer");
      if (s != kProfileBinSeconds) return bad_line(name, ln, "bin_seconds " + std::to_string(s) + ", this build uses " + std::to_string(kProfileBinSeconds));
    } else if (word == "symbol") {
      std::string sym, market;
      VolumeProfile p;
      if (!(f >> sym >> market >> p.level_n >> p.level_vol.mean >> p.level_vol.var >> p.level_cnt.mean >> p.level_cnt.var) ||
          (f >> rest)) {
        return bad_line(name, ln, "symbol line needs: symbol market level_n vol_mean vol_var cnt_mean cnt_var");
      }
      auto m = parse_market_kind(market);
      if (!m && market != "unknown") return bad_line(name, ln, "unknown market \"" + market + "\"");
      p.market = m ? *m : MarketKind::kUnknown;
      if (!finite_all({p.level_vol.mean, p.level_vol.var, p.level_cnt.mean, p.level_cnt.var}) || p.level_vol.var < 0 || p.level_cnt.var < 0) {
        return bad_line(name, ln, "level values must be finite, variances >= 0");
      }
      if (out.count(sym)) return bad_line(name, ln, "symbol " + sym + " listed twice");
      cur = &out[sym];
      *cur = p;
    } else if (word == "bin") {
      if (cur == nullptr) return bad_line(name, ln, "bin line before any symbol line");
      int idx = -1;
      ProfileBin b;
      if (!(f >> idx >> b.n >> b.vol.mean >> b.vol.var >> b.cnt.mean >> b.cnt.var) || (f >> rest)) {
        return bad_line(name, ln, "bin line needs: index n vol_mean vol_var cnt_mean cnt_var");
      }
      if (idx < 0 || idx >= kProfileBins) return bad_line(name, ln, "bin index must be in 0.." + std::to_string(kProfileBins - 1));
      if (!finite_all({b.vol.mean, b.vol.var, b.cnt.mean, b.cnt.var}) || b.vol.var < 0 || b.cnt.var < 0) {
        return bad_line(name, ln, "bin values must be finite, variances >= 0");
      }
      cur->bins[idx] = b;
    } else {
      return bad_line(name, ln, "unknown line \"" + word + "\"");
    }
  }
  if (!header) return {StatusCode::kInvalidArgument, "state file " + name + ": empty, not a ticksentry state file"};
  for (auto& [k, v] : out) profiles_[k] = v;
  return Status::ok();
}

std::string ProfileStore::to_text() const {
  std::string o;
  o += std::string(kMagic) + " " + std::to_string(kProfileStateVersion) + "\n";
  o += "# per-symbol intraday volume profiles (docs/formats.md)\n";
  o += "bin_seconds " + std::to_string(kProfileBinSeconds) + "\n";
  char buf[256];
  for (const auto& [sym, p] : profiles_) {
    std::snprintf(buf, sizeof buf, " %s %llu %.17g %.17g %.17g %.17g\n",
                  p.market == MarketKind::kUnknown ? "unknown" : market_kind_name(p.market),
                  static_cast<unsigned long long>(p.level_n), p.level_vol.mean, p.level_vol.var, p.level_cnt.mean,
                  p.level_cnt.var);
    o += "symbol " + sym + buf;
    for (int b = 0; b < kProfileBins; ++b) {
      const ProfileBin& x = p.bins[b];
      if (x.n == 0) continue;
      std::snprintf(buf, sizeof buf, "bin %d %u %.17g %.17g %.17g %.17g\n", b, x.n, x.vol.mean, x.vol.var, x.cnt.mean,
                    x.cnt.var);
      o += buf;
    }
  }
  return o;
}

Status ProfileStore::save(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return {StatusCode::kIoError, "state file " + path + ": cannot write " + tmp};
    out << to_text();
    out.flush();
    if (!out) return {StatusCode::kIoError, "state file " + path + ": write failed"};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return {StatusCode::kIoError, "state file " + path + ": cannot rename " + tmp};
  }
  return Status::ok();
}

const VolumeProfile* ProfileStore::find(const std::string& symbol) const {
  auto it = profiles_.find(symbol);
  return it == profiles_.end() ? nullptr : &it->second;
}

}  // namespace ts
