#pragma once
// `--symbol GLOB` on replay and record: a Source that passes on only the events of symbols
// matching one of the globs (shell patterns: `*`, `?`, `[...]`, case-sensitive; "600519.SH",
// "GOOG*", "6885??.SH"). Each symbol is decided once, on its first event. Symbols are
// independent in every stage (one book, one feature window, one rule state each), so a filtered
// replay raises exactly the alerts of those symbols that the full replay raises.
// Threading: driven by the source thread, like the source it wraps.
#include <cstdint>
#include <string>
#include <vector>

#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

class SymbolFilterSource : public Source {
 public:
  // `inner` and `symbols` outlive this. Empty `globs`: everything passes.
  SymbolFilterSource(Source& inner, const SymbolTable& symbols, std::vector<std::string> globs);

  size_t next_batch(std::span<Event> out) override;
  bool done() const override { return inner_.done(); }
  std::string describe() const override;
  void feed_counters(FeedCounters& out) const override { inner_.feed_counters(out); }

  uint64_t skipped() const { return skipped_; }        // events of other symbols
  uint64_t symbols_kept() const { return kept_count_; }  // symbols that matched

 private:
  bool keep(SymbolId id);
  Source& inner_;
  const SymbolTable& symbols_;
  std::vector<std::string> globs_;
  std::vector<int8_t> decided_;  // per symbol id: -1 unknown, 0 drop, 1 keep
  uint64_t skipped_ = 0;
  uint64_t kept_count_ = 0;
};

}  // namespace ts
