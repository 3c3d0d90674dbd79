#include "core/exchange_calendar.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace ts {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

Result<ExchangeCalendar> ExchangeCalendar::load(std::string id, const std::string& path,
                                                InputErrors& errors, LoadReport* report) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status{StatusCode::kIoError, "calendar file " + path + ": cannot open"};
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(std::move(id), ss.str(), path, errors, report);
}

Result<ExchangeCalendar> ExchangeCalendar::parse(std::string id, std::string_view text,
                                                 const std::string& file_name,
                                                 InputErrors& errors, LoadReport* report) {
  ExchangeCalendar cal;
  cal.id_ = std::move(id);
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  std::unordered_map<int64_t, uint64_t> first_line;
  bool have_header = false;
  uint64_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (!have_header) {
      if (line != "date,name") {
        return Status{StatusCode::kParseError, "calendar file " + file_name + ": line " +
                                                   std::to_string(line_no) +
                                                   ": expected the header \"date,name\""};
      }
      have_header = true;
      continue;
    }
    const auto reject = [&](InputError kind, const std::string& why) {
      errors.report(kind, file_name, line_no, why);
      rep.bad_rows.push_back({line_no, why});
    };
    const size_t comma = line.find(',');
    if (comma == std::string_view::npos) {
      reject(InputError::kWrongColumnCount, "expected date,name");
      continue;
    }
    const std::string_view name = trim(line.substr(comma + 1));
    if (name.find(',') != std::string_view::npos) {
      reject(InputError::kWrongColumnCount, "expected date,name (a name has no comma)");
      continue;
    }
    auto date = parse_civil_date(trim(line.substr(0, comma)));
    if (!date) {
      reject(InputError::kMalformedLine, date.status().message());
      continue;
    }
    const int64_t day = days_from_civil(date.value());
    if (auto it = first_line.find(day); it != first_line.end()) {
      reject(InputError::kMalformedLine, to_string(date.value()) + ": listed twice (first at line " +
                                             std::to_string(it->second) + ")");
      continue;
    }
    first_line.emplace(day, line_no);
    cal.holidays_.emplace(day, std::string(name));
    if (cal.first_year_ > cal.last_year_) {
      cal.first_year_ = cal.last_year_ = date.value().year;
    } else {
      cal.first_year_ = std::min(cal.first_year_, date.value().year);
      cal.last_year_ = std::max(cal.last_year_, date.value().year);
    }
    ++rep.rows_read;
  }
  if (!have_header) {
    return Status{StatusCode::kParseError, "calendar file " + file_name + ": no header line"};
  }
  if (cal.holidays_.empty()) {
    return Status{StatusCode::kParseError,
                  "calendar file " + file_name + ": no valid row (" +
                      std::to_string(rep.bad_rows.size()) + " bad)"};
  }
  return cal;
}

std::string_view ExchangeCalendar::holiday_name(int64_t day) const {
  auto it = holidays_.find(day);
  return it == holidays_.end() ? std::string_view() : std::string_view(it->second);
}

bool ExchangeCalendar::covers(int64_t day) const {
  const int32_t y = civil_from_days(day).year;
  return y >= first_year_ && y <= last_year_;
}

}  // namespace ts
