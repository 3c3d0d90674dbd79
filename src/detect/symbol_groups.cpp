#include "detect/symbol_groups.h"

namespace ts {

namespace {

Result<Market> parse_market(const std::string& m) {
  if (m == "SH") return Market::kShanghai;
  if (m == "SZ") return Market::kShenzhen;
  if (m == "BJ") return Market::kBeijing;
  if (m == "US") return Market::kUs;
  return Status(StatusCode::kInvalidArgument, "unknown market '" + m + "' (SH, SZ, BJ or US)");
}

}  // namespace

bool SymbolGroups::glob_match(std::string_view p, std::string_view t) {
  // Iterative wildcard match with one backtrack point (the last '*'): linear in practice.
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

Result<SymbolGroups> SymbolGroups::compile(const std::vector<SymbolGroupSpec>& specs) {
  SymbolGroups out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const SymbolGroupSpec& s = specs[i];
    const std::string where = "symbol group " + (s.name.empty() ? "#" + std::to_string(i + 1) : "'" + s.name + "'");
    auto bad = [&](const std::string& what) { return Status(StatusCode::kInvalidArgument, where + ": " + what); };
    if (s.name.empty()) return bad("needs a name");
    for (size_t j = 0; j < i; ++j) {
      if (specs[j].name == s.name) return bad("the name is used twice");
    }
    if (s.symbols.empty() && s.regex.empty() && s.markets.empty()) return bad("needs symbols, regex or markets to match on");
    Group g;
    g.name = s.name;
    for (const auto& glob : s.symbols) {
      if (glob.empty()) return bad("an empty symbol pattern");
      g.globs.push_back(glob);
    }
    if (!s.regex.empty()) {
      try {
        g.regex = std::make_shared<const std::regex>(s.regex, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return bad("bad regex '" + s.regex + "': " + e.what());
      }
    }
    for (const auto& m : s.markets) {
      auto market = parse_market(m);
      if (!market) return bad(market.status().message());
      g.markets.push_back(market.value());
    }
    out.groups_.push_back(std::move(g));
  }
  return out;
}

int SymbolGroups::match(std::string_view name) const {
  for (size_t i = 0; i < groups_.size(); ++i) {
    const Group& g = groups_[i];
    if (!g.markets.empty()) {
      const Market m = market_of(name);
      bool in = false;
      for (Market x : g.markets) in = in || x == m;
      if (!in) continue;
    }
    if (g.globs.empty() && !g.regex) return int(i);
    for (const auto& glob : g.globs) {
      if (glob_match(glob, name)) return int(i);
    }
    if (g.regex && std::regex_match(name.begin(), name.end(), *g.regex)) return int(i);
  }
  return -1;
}

}  // namespace ts
