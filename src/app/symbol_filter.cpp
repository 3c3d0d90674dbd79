#include "app/symbol_filter.h"

#include <fnmatch.h>

#include <algorithm>

namespace ts {

SymbolFilterSource::SymbolFilterSource(Source& inner, const SymbolTable& symbols, std::vector<std::string> globs)
    : inner_(inner), symbols_(symbols), globs_(std::move(globs)) {}

bool SymbolFilterSource::keep(SymbolId id) {
  if (id >= symbols_.size()) return true;  // not a symbol's event: the pipeline counts it
  if (id >= decided_.size()) decided_.resize(size_t(id) + 1, -1);
  if (decided_[id] < 0) {
    const std::string& name = symbols_.name(id);
    const bool match = std::any_of(globs_.begin(), globs_.end(),
                                   [&](const std::string& g) { return fnmatch(g.c_str(), name.c_str(), 0) == 0; });
    decided_[id] = match ? 1 : 0;
    kept_count_ += match;
  }
  return decided_[id] == 1;
}

size_t SymbolFilterSource::next_batch(std::span<Event> out) {
  if (globs_.empty()) return inner_.next_batch(out);
  // Refill until something passes or the inner source has nothing right now: an empty batch
  // would read as "nothing available" to a caller polling a live source.
  for (;;) {
    const size_t n = inner_.next_batch(out);
    if (n == 0) return 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      if (keep(out[i].symbol)) {
        if (kept != i) out[kept] = out[i];
        ++kept;
      } else {
        ++skipped_;
      }
    }
    if (kept > 0) return kept;
  }
}

std::string SymbolFilterSource::describe() const {
  if (globs_.empty()) return inner_.describe();
  std::string g;
  for (const auto& s : globs_) g += (g.empty() ? "" : ", ") + s;
  return inner_.describe() + " (symbols " + g + ")";
}

}  // namespace ts
