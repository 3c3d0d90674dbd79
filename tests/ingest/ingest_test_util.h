#pragma once
// Helpers for the ingest tests: drain a source, count events by kind, write small input files
// (plain or gzip) into a scratch directory, compare events field by field.
#include <zlib.h>

#include <array>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/event.h"
#include "ingest/source.h"

namespace ts::testing {

inline std::vector<Event> drain(Source& src, size_t batch = 1000) {
  std::vector<Event> all;
  std::vector<Event> buf(batch);
  for (;;) {
    const size_t n = src.next_batch(std::span<Event>(buf));
    if (n == 0) break;
    all.insert(all.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  }
  EXPECT_TRUE(src.done());
  return all;
}

inline std::array<size_t, kEventKindCount> count_kinds(const std::vector<Event>& events) {
  std::array<size_t, kEventKindCount> c{};
  for (const auto& e : events) ++c[static_cast<size_t>(e.kind)];
  return c;
}

inline size_t count_kind(const std::vector<Event>& events, EventKind k) {
  return count_kinds(events)[static_cast<size_t>(k)];
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline void write_gz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Decompressed contents of a (possibly gzip) file.
inline std::string read_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// True when a and b are the same event (recv_ts_ns ignored); reports the first difference.
inline ::testing::AssertionResult same_event(const Event& a, const Event& b) {
  auto fail = [&](const char* what) {
    return ::testing::AssertionFailure() << what << " differs (seq " << a.seq << " vs " << b.seq << ")";
  };
  if (a.kind != b.kind) return fail("kind");
  if (a.symbol != b.symbol) return fail("symbol");
  if (a.seq != b.seq) return fail("seq");
  if (a.exch_ts_ns != b.exch_ts_ns) return fail("exch_ts_ns");
  switch (a.kind) {
    case EventKind::kSnapshot: {
      const auto &x = a.snapshot, &y = b.snapshot;
      for (int i = 0; i < kBookLevels; ++i) {
        if (x.bids[i].price != y.bids[i].price || x.bids[i].qty != y.bids[i].qty) return fail("bid level");
        if (x.asks[i].price != y.asks[i].price || x.asks[i].qty != y.asks[i].qty) return fail("ask level");
      }
      if (x.last != y.last || x.prev_close != y.prev_close || x.cum_volume != y.cum_volume ||
          x.cum_turnover != y.cum_turnover || x.phase != y.phase || x.resync != y.resync) {
        return fail("snapshot scalars");
      }
      break;
    }
    case EventKind::kTrade:
      if (a.trade.price != b.trade.price || a.trade.qty != b.trade.qty || a.trade.aggressor != b.trade.aggressor ||
          a.trade.buy_order_id != b.trade.buy_order_id || a.trade.sell_order_id != b.trade.sell_order_id) {
        return fail("trade body");
      }
      break;
    case EventKind::kStatus:
      if (a.status.phase != b.status.phase) return fail("phase");
      break;
    default:
      if (a.order.order_id != b.order.order_id || a.order.price != b.order.price || a.order.qty != b.order.qty ||
          a.order.side != b.order.side) {
        return fail("order body");
      }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ts::testing
