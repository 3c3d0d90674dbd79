#pragma once
// The run's silences (docs/notifications.md, "Silences"): one SilenceStore (src/notify) that the
// notifier and the dashboard share, in a file of its own so that its writes never wait behind
// the alert sinks' transactions.
//
//   [silences]
//   db = "ticksentry-silences.db"     # "" = in memory (lost at exit)
//
//   [[silences.declared]]             # muted for as long as this file is used
//   matchers = ["symbol=GOOG", "type=large_trade"]   # Alertmanager syntax, at least one
//   comment = "known block trades"    # required
//   author = "ops"                    # default "config"
//   starts = "2026-12-02T09:30:00-05:00"   # optional (RFC 3339 with zone)
//   ends = "2026-12-31T00:00:00Z"          # optional
//
// Silences made before they had a file of their own (in the notifier's outbox or the audit
// store) are imported once.
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "notify/silence_store.h"

namespace ts {

struct SilencesConfig {
  std::string db = "ticksentry-silences.db";
  std::vector<notify::Silence> declared;
};

// Reads [silences]; throws ConfigError naming the key ("config key silences.declared[0].matchers: ...").
SilencesConfig read_silences_config(const Config& config);

// Opens the store of `c` (importing from the `legacy` databases that exist). Errors as Status.
Result<std::unique_ptr<notify::SilenceStore>> open_silence_store(const SilencesConfig& c,
                                                                 const std::vector<std::string>& legacy);

}  // namespace ts
