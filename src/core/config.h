#pragma once
// One TOML config file. Every key has a default that lives next to the code that reads it:
// a module reads its section with `section.get("key", default)`. Keys that are in the file but
// that no module read are reported by `unread_keys()` so that a typo never passes silently.
// Loading throws ConfigError (start-up only; never on the hot path).
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace toml { inline namespace v3 { class table; } }

namespace ts {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigSection;

class Config {
 public:
  Config();   // empty: every key at its default
  ~Config();
  Config(Config&&) noexcept;
  Config& operator=(Config&&) noexcept;

  static Config load_file(const std::string& path);
  static Config parse(std::string_view text, const std::string& origin = "<string>");

  // A section such as "sim" or "rules.rapid_rise"; empty if absent.
  ConfigSection section(std::string_view name) const;
  // Dotted names of keys present in the file that no section.get() asked for.
  std::vector<std::string> unread_keys() const;

 private:
  friend class ConfigSection;
  std::unique_ptr<toml::table> root_;
  std::shared_ptr<std::set<std::string>> read_;
};

class ConfigSection {
 public:
  double get(std::string_view key, double def) const;
  int64_t get(std::string_view key, int64_t def) const;
  // An int key: a value outside int's range is a ConfigError naming the key (never cut).
  int get(std::string_view key, int def) const;
  // Ranged reads: a value outside [lo, hi], NaN, or of the wrong type is a ConfigError naming
  // the key, its value and the range. Every numeric key should be read this way; docs/config.md
  // lists the ranges. (Plain get() of a double already refuses NaN.)
  double get_in(std::string_view key, double def, double lo, double hi) const;
  int64_t get_in(std::string_view key, int64_t def, int64_t lo, int64_t hi) const;
  int get_in(std::string_view key, int def, int lo, int hi) const;
  bool get(std::string_view key, bool def) const;
  std::string get(std::string_view key, const char* def) const;
  std::string get(std::string_view key, const std::string& def) const { return get(key, def.c_str()); }
  // An array of strings (e.g. symbols = ["600519.SH", "688*"]).
  std::vector<std::string> get(std::string_view key, const std::vector<std::string>& def) const;
  const std::string& name() const { return name_; }
  // An array of tables ([[model.groups]]): one section per element, named "model.groups[0]", ...
  // Each element's keys are checked by its reader through unread_keys().
  std::vector<ConfigSection> tables(std::string_view key) const;
  // Keys of this section that no get() asked for (dotted names), for sections whose keys the
  // file-wide check does not see (elements of an array of tables).
  std::vector<std::string> unread_keys() const;
  // The section's TOML table (nullptr when absent), for a module that reads nested tables and
  // arrays of tables itself (e.g. [notify]). Every key under it counts as read from then on, so
  // that module must refuse unknown keys itself, with the key's dotted name.
  const toml::table* claim_table() const;

 private:
  friend class Config;
  ConfigSection(const toml::table* table, std::string name, std::shared_ptr<std::set<std::string>> read)
      : table_(table), name_(std::move(name)), read_(std::move(read)) {}
  const void* node(std::string_view key) const;
  const toml::table* table_;
  std::string name_;
  std::shared_ptr<std::set<std::string>> read_;
};

}  // namespace ts
