#pragma once
// Symbol groups: named sets of symbols that get their own decision values (for example a
// stricter model threshold for the ±20% STAR/ChiNext boards, or a longer cooldown for US
// names). A symbol belongs to the first group it matches, in the order the groups are given;
// symbols in no group keep the defaults.
// A group matches a symbol when the symbol's market is in `markets` (when given) and its name
// matches one of the `symbols` globs (* any run, ? one character) or the `regex` (ECMAScript,
// whole name) — when neither is given, the market alone decides.
// Threading: immutable after construction; match() is const and allocation-free apart from
// std::regex's own work. Callers resolve a symbol once and cache the index.
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/symbol_table.h"

namespace ts {

struct SymbolGroupSpec {
  std::string name;
  std::vector<std::string> symbols;  // globs: "600519.SH", "688*", "*.SZ"
  std::string regex;                 // "" = none
  std::vector<std::string> markets;  // "SH", "SZ", "BJ", "US"; empty = any
};

class SymbolGroups {
 public:
  SymbolGroups() = default;
  // Compiles the groups; an empty name, an unknown market, a bad regex or a group with nothing
  // to match on is an error naming the group.
  static Result<SymbolGroups> compile(const std::vector<SymbolGroupSpec>& specs);

  // Index of the first group `name` belongs to, or -1.
  int match(std::string_view name) const;
  size_t size() const { return groups_.size(); }
  const std::string& name(size_t i) const { return groups_[i].name; }

  static bool glob_match(std::string_view pattern, std::string_view text);

 private:
  struct Group {
    std::string name;
    std::vector<std::string> globs;
    std::shared_ptr<const std::regex> regex;  // null = none
    std::vector<Market> markets;
  };
  std::vector<Group> groups_;
};

}  // namespace ts
