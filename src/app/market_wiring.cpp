#include "app/market_wiring.h"

#include "app/builtin_calendars.h"

#include <cstdio>
#include <filesystem>

#include "core/exchange_calendar.h"
#include "core/log.h"

namespace ts {

namespace {
bool fail(const std::string& message) {
  std::fprintf(stderr, "ticksentry: %s\n", message.c_str());
  return false;
}
}  // namespace

bool load_default_calendars(MarketCalendars& calendars, InputErrors& errors, std::string& error) {
  if (std::filesystem::is_directory("config/calendars")) {
    if (Status st = calendars.load_dir("config/calendars", errors); !st) {
      error = st.to_string();
      return false;
    }
    return true;
  }
  for (const BuiltinCalendar& b : builtin_calendars()) {
    auto parsed = ExchangeCalendar::parse(std::string(b.id), b.text, "built-in " + std::string(b.id) + ".csv", errors);
    if (!parsed) {
      error = parsed.status().to_string();
      return false;
    }
    calendars.add(std::move(parsed).value());
  }
  spdlog::info("exchange calendars: the {} built in (config/calendars of this build; [calendars] dir overrides)",
               builtin_calendars().size());
  return !builtin_calendars().empty();
}

bool MarketWiring::build(const Config& config, const CommonOptions& common, SymbolTable& symbols,
                         InputErrors& errors) {
  const ConfigSection in = config.section("instruments");
  InstrumentDefaults defaults;
  const std::string market = in.get("default_market", "");
  if (!market.empty()) {
    auto m = parse_market_kind(market);
    if (!m) return fail("config key instruments.default_market: must be cn-a, us, crypto or \"\", got \"" + market + "\"");
    defaults.bare_ticker_market = *m;
  }
  defaults.crypto_venue = in.get("crypto_venue", defaults.crypto_venue);
  if (defaults.crypto_venue.empty()) return fail("config key instruments.crypto_venue: must not be empty");
  const std::string path = !common.instruments_path.empty() ? common.instruments_path : in.get("path", "");
  instruments_ = std::make_unique<InstrumentTable>(defaults);
  if (!path.empty()) {
    auto loaded = instruments_->load_csv(path, errors);
    if (!loaded) return fail("instruments: " + loaded.status().to_string());
  }
  resolver_ = std::make_unique<InstrumentRefResolver>(*instruments_);
  symbols.set_resolver(resolver_.get());

  const ConfigSection cal = config.section("calendars");
  const std::string dir = cal.get("dir", "");
  if (!dir.empty()) {
    if (Status st = calendars_.load_dir(dir, errors); !st) return fail(st.to_string());
    have_calendars_ = true;
  } else {
    std::string error;
    have_calendars_ = load_default_calendars(calendars_, errors, error);
    if (!error.empty()) return fail(error);
  }

  if (!common.state_in.empty()) {
    if (Status st = profiles_in_.load(common.state_in); !st) return fail(st.to_string());
    spdlog::info("state: {} volume profiles from {}", profiles_in_.size(), common.state_in);
  }
  profiles_out_ = profiles_in_;
  state_out_ = common.state_out;
  return true;
}

void MarketWiring::attach(Pipeline& pipeline) {
  MarketContext m;
  m.calendars = have_calendars_ ? &calendars_ : nullptr;
  m.defaults = instruments_ ? instruments_->defaults() : InstrumentDefaults{};
  m.profiles_in = &profiles_in_;
  pipeline.set_markets(m, state_out_.empty() ? nullptr : &profiles_out_);
}

bool MarketWiring::finish(RunSummary& summary) {
  if (resolver_) {
    summary.instruments["unknown_symbol"] = resolver_->unknown_symbols();
    summary.instruments["reference_rows"] = instruments_->reference_rows();
    for (const std::string& d : resolver_->unknown_details()) spdlog::warn("instruments: {}", d);
  }
  if (!state_out_.empty()) {
    if (Status st = profiles_out_.save(state_out_); !st) return fail(st.to_string());
    spdlog::info("state: {} volume profiles written to {}", profiles_out_.size(), state_out_);
  }
  return true;
}

}  // namespace ts
