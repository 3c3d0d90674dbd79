#include "app/silence_config.h"

#include <limits>

#include "app/time_arg.h"
#include "core/config_suggest.h"

namespace ts {

namespace {

[[noreturn]] void fail(const std::string& key, const std::string& why) {
  throw ConfigError("config key " + key + ": " + why);
}

int64_t read_time(const ConfigSection& s, const char* key, int64_t def) {
  const std::string text = s.get(key, "");
  if (text.empty()) return def;
  auto t = parse_exchange_time(text);
  if (!t.is_ok()) fail(s.name() + "." + key, t.status().message());
  return t.value();
}

}  // namespace

SilencesConfig read_silences_config(const Config& config) {
  const ConfigSection s = config.section("silences");
  SilencesConfig c;
  c.db = s.get("db", c.db);
  for (const ConfigSection& d : s.tables("declared")) {
    notify::Silence sil;
    const std::vector<std::string> texts = d.get("matchers", std::vector<std::string>{});
    if (texts.empty()) fail(d.name() + ".matchers", "a declared silence needs at least one matcher (\"symbol=GOOG\")");
    auto ms = notify::parse_matchers(texts);
    if (!ms.is_ok()) fail(d.name() + ".matchers", ms.status().message());
    sil.matchers = std::move(ms).value();
    sil.comment = d.get("comment", "");
    if (sil.comment.empty()) fail(d.name() + ".comment", "a declared silence needs a comment (why it mutes)");
    sil.author = d.get("author", "config");
    sil.starts_unix_ns = read_time(d, "starts", 0);
    sil.ends_unix_ns = read_time(d, "ends", std::numeric_limits<int64_t>::max());
    if (sil.ends_unix_ns <= sil.starts_unix_ns) fail(d.name() + ".ends", "must be after starts");
    for (const std::string& k : d.unread_keys()) {
      fail(k, "unknown key (a declared silence has matchers, comment, author, starts, ends)" + did_you_mean(k));
    }
    c.declared.push_back(std::move(sil));
  }
  return c;
}

Result<std::unique_ptr<notify::SilenceStore>> open_silence_store(const SilencesConfig& c,
                                                                 const std::vector<std::string>& legacy) {
  return notify::SilenceStore::open(c.db.empty() ? ":memory:" : c.db, c.declared, legacy);
}

}  // namespace ts
