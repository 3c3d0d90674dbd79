#pragma once
// StoreSilences: the admin API's silences served by src/notify's SilenceStore — the same store
// the notification router consults, so a silence made in the dashboard mutes notifications, and
// it persists (SQLite) across restarts.
//
// Mapping: the API's symbol / type / severity become equality matchers on the labels of
// notify/labels.h (alert_labels: the dashboard marks exactly the alerts the router mutes);
// created_by → author ("dashboard" when empty); comment is required (the store asks why);
// duration → ends = now + duration. list() shows every silence (expired ones too), silences made
// elsewhere (matchers of any kind) included: symbol/type/severity are filled from their
// equality matchers, and `matchers` lists them all as text. `muted` counts the alerts this
// process's dashboard saw muted. Threading: any thread (the store locks; the counts take a
// mutex of their own).
#include <map>
#include <mutex>

#include "http/admin_api.h"
#include "notify/silence_store.h"

namespace ts::http {

class StoreSilences : public SilenceAdmin {
 public:
  explicit StoreSilences(notify::SilenceStore& store) : store_(store) {}

  Result<SilenceInfo> create(const SilenceSpec& spec) override;
  std::vector<SilenceInfo> list() override;
  Status expire(const std::string& id) override;
  std::optional<std::string> match(const Alert& a, const SymbolTable& symbols, int64_t now_ms) override;

 private:
  SilenceInfo info(const notify::Silence& s, int64_t now_ns);
  notify::SilenceStore& store_;
  std::mutex mu_;
  std::map<std::string, uint64_t> muted_;
};

}  // namespace ts::http
