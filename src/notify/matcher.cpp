#include "notify/matcher.h"

#include <algorithm>
#include <cctype>

namespace ts::notify {

const char* match_op_symbol(MatchOp op) {
  switch (op) {
    case MatchOp::kEq: return "=";
    case MatchOp::kNe: return "!=";
    case MatchOp::kRe: return "=~";
    case MatchOp::kNre: return "!~";
  }
  return "?";
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}
bool valid_label_name(std::string_view n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}
}  // namespace

Result<Matcher> Matcher::make(std::string name, MatchOp op, std::string value) {
  if (!valid_label_name(name)) {
    return Status(StatusCode::kInvalidArgument, "matcher: bad label name '" + name + "' (letters, digits, _)");
  }
  Matcher m;
  m.name_ = std::move(name);
  m.op_ = op;
  m.value_ = std::move(value);
  if (op == MatchOp::kRe || op == MatchOp::kNre) {
    try {
      m.re_ = std::make_shared<const std::regex>(m.value_, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return Status(StatusCode::kInvalidArgument, "matcher " + m.to_string() + ": bad regex: " + e.what());
    }
  }
  return m;
}

Result<Matcher> Matcher::parse(std::string_view text) {
  const std::string_view t = trim(text);
  const size_t pos = t.find_first_of("=!");
  if (pos == std::string_view::npos || pos == 0) {
    return Status(StatusCode::kInvalidArgument,
                  "matcher '" + std::string(text) + "': expected name=\"v\", name!=\"v\", name=~\"re\" or name!~\"re\"");
  }
  MatchOp op;
  size_t op_len = 2;
  if (t.substr(pos, 2) == "=~") op = MatchOp::kRe;
  else if (t.substr(pos, 2) == "!~") op = MatchOp::kNre;
  else if (t.substr(pos, 2) == "!=") op = MatchOp::kNe;
  else if (t[pos] == '=') { op = MatchOp::kEq; op_len = 1; }
  else return Status(StatusCode::kInvalidArgument, "matcher '" + std::string(text) + "': unknown operator");
  std::string name(trim(t.substr(0, pos)));
  std::string_view v = trim(t.substr(pos + op_len));
  if (!v.empty() && (v.front() == '=' || v.front() == '~')) {
    return Status(StatusCode::kInvalidArgument, "matcher '" + std::string(text) + "': unknown operator (use = != =~ !~)");
  }
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    v = v.substr(1, v.size() - 2);
  } else if (!v.empty() && (v.front() == '"' || v.back() == '"')) {
    return Status(StatusCode::kInvalidArgument, "matcher '" + std::string(text) + "': unbalanced quote");
  }
  auto m = make(std::move(name), op, std::string(v));
  if (!m.is_ok()) return m.status().with_context("matcher '" + std::string(text) + "'");
  return m;
}

bool Matcher::matches(const Labels& labels) const {
  const std::string& v = labels.get(name_);
  switch (op_) {
    case MatchOp::kEq: return v == value_;
    case MatchOp::kNe: return v != value_;
    case MatchOp::kRe: return std::regex_match(v, *re_);
    case MatchOp::kNre: return !std::regex_match(v, *re_);
  }
  return false;
}

std::string Matcher::to_string() const { return name_ + match_op_symbol(op_) + "\"" + value_ + "\""; }

bool matches_all(const std::vector<Matcher>& ms, const Labels& labels) {
  return std::all_of(ms.begin(), ms.end(), [&](const Matcher& m) { return m.matches(labels); });
}

Result<std::vector<Matcher>> parse_matchers(const std::vector<std::string>& texts) {
  std::vector<Matcher> out;
  for (const auto& t : texts) {
    auto m = Matcher::parse(t);
    if (!m.is_ok()) return m.status();
    out.push_back(std::move(m).value());
  }
  return out;
}

}  // namespace ts::notify
