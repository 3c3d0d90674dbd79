#include "core/config.h"

#include "core/config_suggest.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

namespace ts {

Config::Config() : root_(std::make_unique<toml::table>()), read_(std::make_shared<std::set<std::string>>()) {}
Config::~Config() = default;
Config::Config(Config&&) noexcept = default;
Config& Config::operator=(Config&&) noexcept = default;

Config Config::load_file(const std::string& path) {
  Config c;
  try {
    *c.root_ = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError("config " + path + ": " + std::string(e.description()) + " at line " +
                      std::to_string(e.source().begin.line));
  }
  return c;
}

Config Config::parse(std::string_view text, const std::string& origin) {
  Config c;
  try {
    *c.root_ = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw ConfigError("config " + origin + ": " + std::string(e.description()) + " at line " +
                      std::to_string(e.source().begin.line));
  }
  return c;
}

ConfigSection Config::section(std::string_view name) const {
  const toml::node* n = root_->at_path(name).node();
  const toml::table* t = n ? n->as_table() : nullptr;
  return ConfigSection(t, std::string(name), read_);
}

namespace {
void collect_keys(const toml::table& t, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, v] : t) {
    std::string name = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      collect_keys(*sub, name, out);
    } else {
      out.push_back(name);
    }
  }
}
}  // namespace

namespace {

std::mutex g_suggest_mu;
std::map<std::string, std::string> g_suggestions;  // unknown key → nearest key asked for

std::string parent_of(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? std::string() : key.substr(0, dot);
}

// Records the nearest of `asked` to each of `unread` for suggest_config_key().
void record_suggestions(const std::vector<std::string>& unread, const std::set<std::string>& asked) {
  std::lock_guard lock(g_suggest_mu);
  // A process reads a config or two; one that parses configs without end (config_fuzz) would grow
  // this map without bound: past 4096 unknown keys the older suggestions are dropped.
  if (g_suggestions.size() > 4096) g_suggestions.clear();
  // Suggestions for the first 16 unknown keys (a file with more is not a typo; each costs a pass
  // over every key asked for, ~1,000 with the rules' per-market keys).
  constexpr size_t kMaxSuggested = 16;
  for (size_t n = 0; n < unread.size() && n < kMaxSuggested; ++n) {
    const std::string& k = unread[n];
    const std::string parent = parent_of(k), leaf = k.substr(parent.empty() ? 0 : parent.size() + 1);
    std::string best;
    size_t best_d = std::max<size_t>(1, leaf.size() / 3) + 1;  // the same section: a close last part
    // The lengths' difference is a lower bound of the distance: most keys are skipped by it.
    auto length_gap = [](size_t x, size_t y) { return x > y ? x - y : y - x; };
    for (const auto& a : asked) {
      if (a == k || parent_of(a) != parent) continue;
      const std::string a_leaf = a.substr(parent.empty() ? 0 : parent.size() + 1);
      if (length_gap(leaf.size(), a_leaf.size()) >= best_d) continue;
      const size_t d = edit_distance(leaf, a_leaf, best_d);
      if (d < best_d) best_d = d, best = a;
    }
    if (best.empty()) {  // another section: a close whole name
      best_d = std::max<size_t>(2, k.size() / 5) + 1;
      for (const auto& a : asked) {
        if (a == k || length_gap(k.size(), a.size()) >= best_d) continue;
        const size_t d = edit_distance(k, a, best_d);
        if (d < best_d) best_d = d, best = a;
      }
    }
    g_suggestions[k] = best;
  }
}

}  // namespace

size_t edit_distance(const std::string& a, const std::string& b, size_t limit) {
  // Three rolling rows (the transposition looks two back) instead of a matrix: one allocation per
  // call. PERF NOTE: a config with unknown keys compares each with every key asked for; with a
  // matrix of vectors that took 70 ms per unknown key under config_fuzz's sanitizers.
  std::vector<size_t> rows(3 * (b.size() + 1));
  size_t* two_back = rows.data();
  size_t* prev = two_back + (b.size() + 1);
  size_t* cur = prev + (b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], two_back[j - 2] + 1);
      row_min = std::min(row_min, cur[j]);
    }
    // A row's minimum never falls in the rows below it (each cell costs at least its best
    // neighbour above), so the distance is at least this row's minimum.
    if (row_min >= limit) return limit;
    std::swap(two_back, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], limit);
}

std::string suggest_config_key(const std::string& unknown) {
  std::lock_guard lock(g_suggest_mu);
  auto it = g_suggestions.find(unknown);
  return it == g_suggestions.end() ? std::string() : it->second;
}

std::string did_you_mean(const std::string& unknown) {
  const std::string s = suggest_config_key(unknown);
  return s.empty() ? std::string() : " (did you mean '" + s + "'?)";
}

std::vector<std::string> Config::unread_keys() const {
  std::vector<std::string> all, unread;
  collect_keys(*root_, "", all);
  for (auto& k : all) {
    if (!read_->count(k)) unread.push_back(k);
  }
  record_suggestions(unread, *read_);
  return unread;
}

const toml::table* ConfigSection::claim_table() const {
  if (!table_) return nullptr;
  std::vector<std::string> keys;
  collect_keys(*table_, name_, keys);
  read_->insert(keys.begin(), keys.end());
  return table_;
}

const void* ConfigSection::node(std::string_view key) const {
  read_->insert(name_ + "." + std::string(key));
  if (!table_) return nullptr;
  return table_->get(key);
}

std::vector<std::string> ConfigSection::unread_keys() const {
  std::vector<std::string> all, unread;
  if (table_) collect_keys(*table_, name_, all);
  for (auto& k : all) {
    if (!read_->count(k)) unread.push_back(k);
  }
  record_suggestions(unread, *read_);
  return unread;
}

namespace {
[[noreturn]] void type_error(const std::string& section, std::string_view key, const std::string& want) {
  throw ConfigError("config key " + section + "." + std::string(key) + ": expected " + want);
}
}  // namespace

double ConfigSection::get(std::string_view key, double def) const {
  auto* n = static_cast<const toml::node*>(node(key));
  if (!n) return def;
  if (auto v = n->value<double>()) {
    if (std::isnan(*v)) type_error(name_, key, "a number (got nan)");
    return *v;
  }
  type_error(name_, key, "a number");
}

int ConfigSection::get(std::string_view key, int def) const {
  return get_in(key, def, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
}

namespace {
template <typename T>
[[noreturn]] void range_error(const std::string& section, std::string_view key, T v, T lo, T hi) {
  std::ostringstream o;
  o << "config key " << section << "." << key << " = " << v << ": out of range [" << lo << ", " << hi << "]";
  throw ConfigError(o.str());
}
}  // namespace

double ConfigSection::get_in(std::string_view key, double def, double lo, double hi) const {
  double v = get(key, def);
  if (!(v >= lo && v <= hi)) range_error(name_, key, v, lo, hi);
  return v;
}

int64_t ConfigSection::get_in(std::string_view key, int64_t def, int64_t lo, int64_t hi) const {
  int64_t v = get(key, def);
  if (v < lo || v > hi) range_error(name_, key, v, lo, hi);
  return v;
}

int ConfigSection::get_in(std::string_view key, int def, int lo, int hi) const {
  return int(get_in(key, int64_t(def), int64_t(lo), int64_t(hi)));
}

int64_t ConfigSection::get(std::string_view key, int64_t def) const {
  auto* n = static_cast<const toml::node*>(node(key));
  if (!n) return def;
  if (n->is_integer()) return n->as_integer()->get();
  type_error(name_, key, "an integer");
}

bool ConfigSection::get(std::string_view key, bool def) const {
  auto* n = static_cast<const toml::node*>(node(key));
  if (!n) return def;
  if (n->is_boolean()) return n->as_boolean()->get();
  type_error(name_, key, "true or false");
}

std::string ConfigSection::get(std::string_view key, const char* def) const {
  auto* n = static_cast<const toml::node*>(node(key));
  if (!n) return def;
  if (n->is_string()) return n->as_string()->get();
  type_error(name_, key, "a string");
}

std::vector<std::string> ConfigSection::get(std::string_view key, const std::vector<std::string>& def) const {
  auto* n = static_cast<const toml::node*>(node(key));
  if (!n) return def;
  const toml::array* a = n->as_array();
  if (!a) type_error(name_, key, "an array of strings");
  std::vector<std::string> out;
  for (const toml::node& e : *a) {
    if (!e.is_string()) type_error(name_, key, "an array of strings");
    out.push_back(e.as_string()->get());
  }
  return out;
}

std::vector<ConfigSection> ConfigSection::tables(std::string_view key) const {
  auto* n = static_cast<const toml::node*>(node(key));
  std::vector<ConfigSection> out;
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (a && a->empty()) return out;
  if (!a || !a->is_array_of_tables()) type_error(name_, key, "an array of tables ([[" + name_ + "." + std::string(key) + "]])");
  for (size_t i = 0; i < a->size(); ++i) {
    out.push_back(ConfigSection(a->get(i)->as_table(), name_ + "." + std::string(key) + "[" + std::to_string(i) + "]", read_));
  }
  return out;
}

}  // namespace ts
