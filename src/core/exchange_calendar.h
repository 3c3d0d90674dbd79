#pragma once
// ExchangeCalendar: the days an exchange is closed besides weekends, read from a data file
// shipped in config/calendars/<id>.csv (docs/instruments.md):
//
//   # cn-a: Shanghai, Shenzhen and Beijing stock exchanges
//   date,name
//   2026-02-16,Spring Festival
//
// One row per closed date; rows in any order; a date listed twice is a bad row. Weekend rows are
// allowed (and change nothing). Users extend a calendar by adding rows. Every bad row is
// counted (InputErrors) and named by file:line, the rest are read; a file with no valid row is
// an error. The years the file covers are those of its first and last dates: asking about a
// day outside them (covers() false) means its holidays are unknown, and callers treat such a
// day as an ordinary weekday.
// Threading: immutable after load; is_holiday() is safe from any thread.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/civil_time.h"
#include "core/input_errors.h"
#include "core/load_report.h"
#include "core/status.h"

namespace ts {

class ExchangeCalendar {
 public:
  ExchangeCalendar() = default;  // no holidays, covers nothing
  // `id` names the calendar ("cn-a"); `path` is read whole. Errors: cannot open, no header
  // "date,name", no valid row.
  static Result<ExchangeCalendar> load(std::string id, const std::string& path,
                                       InputErrors& errors, LoadReport* report = nullptr);
  static Result<ExchangeCalendar> parse(std::string id, std::string_view text,
                                        const std::string& file_name, InputErrors& errors,
                                        LoadReport* report = nullptr);

  // Day numbers as civil_time.h counts them (days since 1970-01-01).
  bool is_holiday(int64_t day) const { return holidays_.count(day) != 0; }
  // The holiday's name ("Spring Festival"), or "" when `day` is not one.
  std::string_view holiday_name(int64_t day) const;
  bool covers(int64_t day) const;
  const std::string& id() const { return id_; }
  size_t size() const { return holidays_.size(); }

 private:
  std::string id_;
  std::unordered_map<int64_t, std::string> holidays_;  // day → name
  int32_t first_year_ = 0;
  int32_t last_year_ = -1;
};

}  // namespace ts
