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
  if (!(min_move_spreads >= 0)) return bad("label min move must be >= 0 spreads (0 = off)");
  if (!(min_move_bps >= 0)) return bad("label min move must be >= 0 bps (0 = off)");
  if (!(settle_s >= 0 && settle_s <= 3600)) return bad("label settle must be in 0..3600 s");
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

const char* onset_size_unit(OnsetKind kind) {
  switch (kind) {
    case OnsetKind::kPriceMove: return "bps";
    case OnsetKind::kVolumeShock: return "z";
    case OnsetKind::kLiquidityShock: return "depth_lost";
    case OnsetKind::kInjected: return "-";
  }
  return "-";
}

std::vector<Onset> label_onsets(std::span<const LabelSample> samples, std::span<const InjectedSpan> injected,
                                const LabelOptions& o) {
  std::vector<Onset> out;
  const int64_t horizon_ns = int64_t(std::llround(o.horizon_s * 1e9));
  const int64_t refractory_ns = int64_t(std::llround(o.refractory() * 1e9));
  const int64_t gap_ns = o.gap_s * kSecNs;
  const int64_t settle_ns = int64_t(std::llround(o.settle_s * 1e9));
  const double sqrt_h = std::sqrt(o.horizon_s);
  const double depth_log = o.depth_drop > 0 ? std::log(1 - o.depth_drop) : -INFINITY;
  int64_t last_abnormal = INT64_MIN;

  size_t seg_begin = 0;
  while (seg_begin < samples.size()) {
    size_t seg_end = seg_begin + 1;  // one past the segment's last sample
    while (seg_end < samples.size() && samples[seg_end].ts_ns - samples[seg_end - 1].ts_ns <= gap_ns) ++seg_end;
    const int64_t first = samples[seg_begin].ts_ns, last = samples[seg_end - 1].ts_ns;
    size_t cur = seg_begin, ref = seg_begin, next = seg_begin;  // next: first sample not yet checked
    bool was_trading = false;            // a segment starts as a reopening
    int64_t trading_since = first;
    for (int64_t t = first; t <= last; t += kSecNs) {
      while (cur + 1 < seg_end && samples[cur + 1].ts_ns <= t) ++cur;
      const bool trading = samples[cur].trading;
      if (trading && !was_trading) trading_since = t;
      was_trading = trading;
      bool price = false, volume = false, liquidity = false;
      double price_bps = 0, volume_z = 0, depth_lost = 0;
      const int64_t t_ref = t - horizon_ns;
      // No return from the reopening: the reference second must be past the settle too (a 60 s
      // return from 2 s after the opening match is the match's aftermath, not an event).
      if (t_ref >= first && t_ref - trading_since >= settle_ns) {
        while (ref + 1 < seg_end && samples[ref + 1].ts_ns <= t_ref) ++ref;
        const LabelSample& a = samples[ref];
        const LabelSample& b = samples[cur];
        if (a.trading && b.trading && a.mid > 0 && b.mid > 0) {
          price_bps = std::log(b.mid / a.mid) * 1e4;
          const double ret_bps = std::abs(price_bps);
          const double move = std::abs(b.mid - a.mid);
          const double sigma = std::max(double(a.vol_bps), o.vol_floor_bps);
          price = ret_bps > o.k * sigma * sqrt_h && move >= o.min_move_ticks && ret_bps >= o.min_move_bps &&
                  (a.spread <= 0 || move >= o.min_move_spreads * a.spread);
        }
      }
      // Shocks: at samples (fresh values), not on carried-forward seconds.
      for (; next < seg_end && samples[next].ts_ns <= t; ++next) {
        const LabelSample& s = samples[next];
        if (!s.trading) continue;
        if (o.volume_z > 0 && s.volume_z >= o.volume_z) volume = true, volume_z = std::max(volume_z, double(s.volume_z));
        if (s.depth_change <= depth_log) {
          liquidity = true;
          depth_lost = std::max(depth_lost, 1 - std::exp(double(s.depth_change)));
        }
      }
      if (!(price || volume || liquidity)) continue;
      const bool settling = t - trading_since < settle_ns;  // the reopening's own episode
      if (!settling && (last_abnormal == INT64_MIN || t - last_abnormal > refractory_ns)) {
        const OnsetKind kind = price ? OnsetKind::kPriceMove : volume ? OnsetKind::kVolumeShock : OnsetKind::kLiquidityShock;
        out.push_back(Onset{t, kind, price ? price_bps : volume ? volume_z : depth_lost});
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
    for (const auto& s : injected) out.push_back(Onset{s.start_ns, OnsetKind::kInjected, 0});
    std::stable_sort(out.begin(), out.end(), [](const Onset& a, const Onset& b) { return a.ts_ns < b.ts_ns; });
  }
  return out;
}

WindowLabel label_window(std::span<const Onset> onsets, int64_t end_ts_ns, const LabelOptions& o, LabelTask task) {
  const int64_t horizon_ns = task == LabelTask::kDetect ? 0 : int64_t(std::llround(o.horizon_s * 1e9));
  const int64_t grace_ns = task == LabelTask::kForecast ? 0 : int64_t(std::llround(o.grace_s * 1e9));
  const int64_t from = end_ts_ns - grace_ns;  // the interval is (from, end + horizon]
  auto it = std::upper_bound(onsets.begin(), onsets.end(), from,
                             [](int64_t t, const Onset& x) { return t < x.ts_ns; });
  if (it != onsets.end() && it->ts_ns <= end_ts_ns + horizon_ns) return WindowLabel{1, it->ts_ns};
  return WindowLabel{};
}

}  // namespace ts
