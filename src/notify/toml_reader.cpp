#include "notify/toml_reader.h"

#include "core/config_suggest.h"

#include <algorithm>

#include <toml++/toml.h>

#include <cmath>
#include <sstream>

namespace ts::notify {

bool TomlReader::has(const std::string& key) const { return t_.contains(key); }

const void* TomlReader::get(const std::string& key) {
  seen_.insert(key);
  return t_.get(key);
}

void TomlReader::fail(const std::string& key, const std::string& what) const {
  throw ConfigError("config key " + key_path(key) + ": " + what);
}

std::string TomlReader::str(const std::string& key, const std::string& def) {
  auto* n = static_cast<const toml::node*>(get(key));
  if (!n) return def;
  if (!n->is_string()) fail(key, "expected a string");
  return n->as_string()->get();
}

int64_t TomlReader::integer(const std::string& key, int64_t def) {
  auto* n = static_cast<const toml::node*>(get(key));
  if (!n) return def;
  if (!n->is_integer()) fail(key, "expected an integer");
  return n->as_integer()->get();
}

double TomlReader::number(const std::string& key, double def) {
  auto* n = static_cast<const toml::node*>(get(key));
  if (!n) return def;
  if (auto v = n->value<double>()) {
    if (std::isnan(*v)) fail(key, "expected a number (got nan)");
    return *v;
  }
  fail(key, "expected a number");
}

int64_t TomlReader::integer_in(const std::string& key, int64_t def, int64_t lo, int64_t hi) {
  const int64_t v = integer(key, def);
  if (v < lo || v > hi) {
    fail(key, std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

double TomlReader::number_in(const std::string& key, double def, double lo, double hi) {
  const double v = number(key, def);
  if (!(v >= lo && v <= hi)) {
    std::ostringstream o;
    o << v << " out of range [" << lo << ", " << hi << "]";
    fail(key, o.str());
  }
  return v;
}

bool TomlReader::boolean(const std::string& key, bool def) {
  auto* n = static_cast<const toml::node*>(get(key));
  if (!n) return def;
  if (!n->is_boolean()) fail(key, "expected true or false");
  return n->as_boolean()->get();
}

std::vector<std::string> TomlReader::strings(const std::string& key) {
  auto* n = static_cast<const toml::node*>(get(key));
  std::vector<std::string> out;
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) fail(key, "expected an array of strings");
  for (const auto& e : *a) {
    if (!e.is_string()) fail(key, "expected an array of strings");
    out.push_back(e.as_string()->get());
  }
  return out;
}

const toml::table* TomlReader::table(const std::string& key) {
  auto* n = static_cast<const toml::node*>(get(key));
  if (!n) return nullptr;
  if (!n->is_table()) fail(key, "expected a table ([" + key_path(key) + "])");
  return n->as_table();
}

std::vector<const toml::table*> TomlReader::tables(const std::string& key) {
  auto* n = static_cast<const toml::node*>(get(key));
  std::vector<const toml::table*> out;
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) fail(key, "expected an array of tables ([[" + key_path(key) + "]])");
  for (const auto& e : *a) {
    if (!e.is_table()) fail(key, "expected an array of tables ([[" + key_path(key) + "]])");
    out.push_back(e.as_table());
  }
  return out;
}

void TomlReader::finish() const {
  for (const auto& [k, v] : t_) {
    const std::string key(k.str());
    if (seen_.count(key)) continue;
    // The nearest key this reader asked for: "recever" → "receiver".
    std::string best;
    size_t best_d = std::max<size_t>(1, key.size() / 3) + 1;
    for (const auto& s : seen_) {
      const size_t d = edit_distance(key, s);
      if (d < best_d) best_d = d, best = s;
    }
    fail(key, best.empty() ? "unknown key" : "unknown key (did you mean '" + best + "'?)");
  }
}

}  // namespace ts::notify
