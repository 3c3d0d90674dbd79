#include "features/labeler.h"

#include <algorithm>
#include <cmath>

namespace ts {

namespace {
constexpr int64_t kSecNs = 1'000'000'000;
}  // namespace

Status LabelOptions::validate() const {
  auto bad = [](const std::string& m) { return Status(StatusCode::kInvalidArgument, m); };
  if (!(horizon_s >= 1 && horizon_s <= 3600)) return bad("label horizon must be in 1..3600 s");
  if (!(k > 0)) return bad("label k must be > 0");
  if (!(vol_floor_bps >= 0)) return bad("label vol floor must be >= 0");
  if (!(min_move_ticks >= 0)) return bad("label min move must be >= 0 ticks");
  if (!(volume_z >= 0)) return bad("label volume z must be >= 0 (0 = off)");
  if (!(depth_drop >= 0 && depth_drop < 1)) return bad("label depth drop must be in [0, 1) (0 = off)");
  if (!(refractory_s >= 0)) return bad("label refractory must be >= 0 s (0 = the horizon)");
  if (!(grace_s >= 0 && grace_s <= horizon_s)) return bad("label grace must be in 0..horizon s");
  if (gap_s < 1) return bad("label gap must be >= 1 s");
  return Status::ok();
}

const char* onset_kind_name(OnsetKind kind) {
  switch (kind) {
    case OnsetKind::kPriceMove: return "price_move";
    case OnsetKind::kVolumeShock: return "volume_shock";
    case OnsetKind::kLiquidityShock: return "liquidity_shock";
    case OnsetKind::kInjected: return "injected";
  }
  return "unknown";
}

std::vector<Onset> label_onsets(std::span<const LabelSample> samples, std::span<const InjectedSpan> injected,
                                const LabelOptions& o) {
  std::vector<Onset> out;
  const int64_t horizon_ns = int64_t(std::llround(o.horizon_s * 1e9));
  const int64_t refractory_ns = int64_t(std::llround(o.refractory() * 1e9));
  const int64_t gap_ns = o.gap_s * kSecNs;
  const double sqrt_h = std::sqrt(o.horizon_s);
  const double depth_log = o.depth_drop > 0 ? std::log(1 - o.depth_drop) : -INFINITY;
  int64_t last_abnormal = INT64_MIN;

  size_t seg_begin = 0;
  while (seg_begin < samples.size()) {
    size_t seg_end = seg_begin + 1;  // one past the segment's last sample
    while (seg_end < samples.size() && samples[seg_end].ts_ns - samples[seg_end - 1].ts_ns <= gap_ns) ++seg_end;
    const int64_t first = samples[seg_begin].ts_ns, last = samples[seg_end - 1].ts_ns;
    size_t cur = seg_begin, ref = seg_begin, next = seg_begin;  // next: first sample not yet checked
    for (int64_t t = first; t <= last; t += kSecNs) {
      while (cur + 1 < seg_end && samples[cur + 1].ts_ns <= t) ++cur;
      bool price = false, volume = false, liquidity = false;
      const int64_t t_ref = t - horizon_ns;
      if (t_ref >= first) {
        while (ref + 1 < seg_end && samples[ref + 1].ts_ns <= t_ref) ++ref;
        const LabelSample& a = samples[ref];
        const LabelSample& b = samples[cur];
        if (a.trading && b.trading && a.mid > 0 && b.mid > 0) {
          const double ret_bps = std::abs(std::log(b.mid / a.mid)) * 1e4;
          const double sigma = std::max(double(a.vol_bps), o.vol_floor_bps);
          price = ret_bps > o.k * sigma * sqrt_h && std::abs(b.mid - a.mid) >= o.min_move_ticks;
        }
      }
      // Shocks: at samples (fresh values), not on carried-forward seconds.
      for (; next < seg_end && samples[next].ts_ns <= t; ++next) {
        const LabelSample& s = samples[next];
        if (!s.trading) continue;
        if (o.volume_z > 0 && s.volume_z >= o.volume_z) volume = true;
        if (s.depth_change <= depth_log) liquidity = true;
      }
      if (!(price || volume || liquidity)) continue;
      if (last_abnormal == INT64_MIN || t - last_abnormal > refractory_ns) {
        const OnsetKind kind = price ? OnsetKind::kPriceMove : volume ? OnsetKind::kVolumeShock : OnsetKind::kLiquidityShock;
        out.push_back(Onset{t, kind});
      }
      last_abnormal = t;
    }
    seg_begin = seg_end;
  }

  if (!injected.empty()) {
    std::erase_if(out, [&](const Onset& x) {
      for (const auto& s : injected) {
        if (x.ts_ns >= s.start_ns && x.ts_ns <= s.end_ns + refractory_ns) return true;
      }
      return false;
    });
    for (const auto& s : injected) out.push_back(Onset{s.start_ns, OnsetKind::kInjected});
    std::stable_sort(out.begin(), out.end(), [](const Onset& a, const Onset& b) { return a.ts_ns < b.ts_ns; });
  }
  return out;
}

WindowLabel label_window(std::span<const Onset> onsets, int64_t end_ts_ns, const LabelOptions& o) {
  const int64_t horizon_ns = int64_t(std::llround(o.horizon_s * 1e9));
  const int64_t from = end_ts_ns - int64_t(std::llround(o.grace_s * 1e9));
  auto it = std::upper_bound(onsets.begin(), onsets.end(), from,
                             [](int64_t t, const Onset& x) { return t < x.ts_ns; });
  if (it != onsets.end() && it->ts_ns <= end_ts_ns + horizon_ns) return WindowLabel{1, it->ts_ns};
  return WindowLabel{};
}

}  // namespace ts
