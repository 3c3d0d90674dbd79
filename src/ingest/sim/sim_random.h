#pragma once
// Random numbers for the simulator: xoshiro256** seeded through splitmix64, and the few
// distributions the order-flow model draws per event. Header-only so the hot loop inlines them;
// nothing here allocates after construction.
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace ts::sim {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna): 64-bit output, period 2^256 - 1, ~1 ns per draw.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }
  uint64_t next() {
    const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n) (Lemire's multiply-shift; bias < 2^-32, irrelevant here).
  uint32_t below(uint32_t n) { return uint32_t((uint64_t(uint32_t(next() >> 32)) * n) >> 32); }
  bool chance(double p) { return uniform() < p; }
  // Exponential with mean 1.
  double exponential() { return -std::log(1.0 - uniform()); }
  // Approximately standard normal: Irwin-Hall sum of four 16-bit uniforms, rescaled to unit
  // variance. Tails stop at ±3.46 sigma, which is what a quiet random walk wants anyway.
  double normal() {
    const uint64_t r = next();
    const double sum = double((r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) + (r >> 48));
    return (sum * (1.0 / 65536.0) - 2.0) * 1.7320508075688772;
  }

 private:
  uint64_t s_[4];
};

// Walker/Vose alias table: O(1) draws from a fixed categorical distribution.
class AliasTable {
 public:
  void build(std::span<const double> weights) {
    const size_t n = weights.size();
    threshold_.assign(n, 0);
    alias_.assign(n, 0);
    double total = 0;
    for (double w : weights) total += w;
    std::vector<double> scaled(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * double(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(uint32_t(i));
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      threshold_[s] = uint32_t(std::min(scaled[s], 1.0) * 4294967295.0);
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (uint32_t i : large) threshold_[i] = UINT32_MAX, alias_[i] = i;
    for (uint32_t i : small) threshold_[i] = UINT32_MAX, alias_[i] = i;
  }
  uint32_t sample(Rng& rng) const {
    const uint64_t r = rng.next();
    const auto i = uint32_t(((r >> 32) * threshold_.size()) >> 32);
    return uint32_t(r) < threshold_[i] ? i : alias_[i];
  }
  size_t size() const { return threshold_.size(); }

 private:
  std::vector<uint32_t> threshold_;
  std::vector<uint32_t> alias_;
};

}  // namespace ts::sim
