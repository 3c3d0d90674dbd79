#pragma once
// The feature set: one definition shared by serving and (later) training export.
// Formulas, units and windows: docs/features.md. The order here is the column order of a
// feature row and of exported windows; append, never reorder.
#include <cstdint>

namespace ts {

enum FeatureId : int {
  kRet1s = 0,          // log mid return over 1 s, basis points
  kRet10s,             // ... over 10 s, bps
  kRet60s,             // ... over 60 s, bps
  kRet300s,            // ... over 300 s, bps
  kVolShort,           // realized volatility, 30 s EWMA of squared 1 s returns, bps per sqrt(s)
  kVolLong,            // realized volatility, 600 s EWMA, bps per sqrt(s)
  kVolRatio,           // vol_short / vol_long (volatility surge)
  kVolumeZ,            // z-score of the last 10 s traded volume against its rolling baseline
  kTradeCountZ,        // z-score of the last 10 s trade count against its rolling baseline
  kImbalance1,         // (bid - ask) / (bid + ask) size at level 1, in [-1, 1]
  kImbalance5,         // ... over the top 5 levels
  kImbalance10,        // ... over the top 10 levels
  kSpreadTicks,        // best ask - best bid, ticks
  kMicropriceDev,      // microprice - mid, ticks
  kDepthChange,        // log change of top-5 total depth over 10 s
  kTradeFlowImbalance, // (buy - sell aggressor volume) / (buy + sell) over 10 s, in [-1, 1]
  kDistLimitUp,        // (limit_up - last) / prev_close, fraction; 0 where no limits
  kDistLimitDown,      // (last - limit_down) / prev_close, fraction; 0 where no limits
  kRetFromPrevClose,   // last / prev_close - 1, fraction; 0 where prev_close unknown
  kLargeTradeRatio,    // share of the last 60 s volume printed in trades >= the large-trade size
  kFeatureCount
};

const char* feature_name(int id);

}  // namespace ts
