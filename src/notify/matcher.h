#pragma once
// Label matchers, Alertmanager's syntax: `name="value"`, `name!="value"`, `name=~"regex"`,
// `name!~"regex"` (quotes optional for values without spaces or commas). Regexes are ECMAScript
// and anchored: `symbol=~"60.*"` matches the whole value. A missing label matches as "".
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "notify/labels.h"

namespace ts::notify {

enum class MatchOp : uint8_t { kEq = 0, kNe, kRe, kNre };
const char* match_op_symbol(MatchOp op);  // "=", "!=", "=~", "!~"

class Matcher {
 public:
  // Parses one matcher; an error names the text and what is wrong with it.
  static Result<Matcher> parse(std::string_view text);
  static Result<Matcher> make(std::string name, MatchOp op, std::string value);

  bool matches(const Labels& labels) const;
  const std::string& name() const { return name_; }
  MatchOp op() const { return op_; }
  const std::string& value() const { return value_; }
  // `name=~"value"`: parse(to_string()) gives the same matcher.
  std::string to_string() const;

 private:
  std::string name_;
  MatchOp op_ = MatchOp::kEq;
  std::string value_;
  std::shared_ptr<const std::regex> re_;  // kRe/kNre only; shared: matchers are copied around
};

// Every matcher matches (an empty list matches everything).
bool matches_all(const std::vector<Matcher>& ms, const Labels& labels);
Result<std::vector<Matcher>> parse_matchers(const std::vector<std::string>& texts);

}  // namespace ts::notify
