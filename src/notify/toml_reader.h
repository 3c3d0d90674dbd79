#pragma once
// Reads one TOML table of the [notify] section with clear errors: every getter names the key's
// full dotted path ("notify.receivers[2].url: expected a string"), and finish() refuses keys no
// getter asked for ("notify.route.recever: unknown key"). Start-up only: throws ConfigError.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"

namespace ts::notify {

class TomlReader {
 public:
  TomlReader(const toml::table& t, std::string path) : t_(t), path_(std::move(path)) {}

  bool has(const std::string& key) const;
  std::string str(const std::string& key, const std::string& def);
  int64_t integer(const std::string& key, int64_t def);
  double number(const std::string& key, double def);
  // Ranged reads: outside [lo, hi] (or NaN) fails naming the key, its value and the range.
  int64_t integer_in(const std::string& key, int64_t def, int64_t lo, int64_t hi);
  double number_in(const std::string& key, double def, double lo, double hi);
  bool boolean(const std::string& key, bool def);
  std::vector<std::string> strings(const std::string& key);
  const toml::table* table(const std::string& key);                // nullptr when absent
  std::vector<const toml::table*> tables(const std::string& key);  // array of tables ([[key]])
  // Throws for every key present and never asked for.
  void finish() const;
  std::string key_path(const std::string& key) const { return path_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

 private:
  const void* get(const std::string& key);
  const toml::table& t_;
  std::string path_;
  std::set<std::string> seen_;
};

}  // namespace ts::notify
