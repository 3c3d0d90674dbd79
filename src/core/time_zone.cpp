#include "core/time_zone.h"

#include <date/tz.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <string_view>

#include "core/civil_time.h"

namespace ts {

namespace {

// Where USE_OS_TZDB builds of the date library read zones (its discover_tz_dir()).
constexpr const char* kZoneDir = "/usr/share/zoneinfo";

bool valid_zone_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name.front() == '/' || name.find("..") != std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+';
  });
}

// The POSIX TZ rule in a TZif v2+ file's footer ("\n<rule>\n" after the data), or "" when the
// file has none (v1, or an empty footer: the last offset holds).
std::string read_footer(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 6 || bytes.compare(0, 4, "TZif") != 0 || bytes[4] < '2' || bytes.back() != '\n') return "";
  const size_t nl = bytes.rfind('\n', bytes.size() - 2);
  if (nl == std::string::npos) return "";
  return bytes.substr(nl + 1, bytes.size() - nl - 2);
}

}  // namespace

Result<std::shared_ptr<const TimeZone>> TimeZone::load(const std::string& name) {
  if (!valid_zone_name(name)) {
    return Status(StatusCode::kInvalidArgument,
                  "time zone '" + name + "': expected an IANA zone name such as America/New_York or Asia/Shanghai");
  }
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = name;
  try {  // date reports a missing zone or database by exception; start-up code, so caught here
    tz->zone_ = date::locate_zone(name);
    const auto far = date::sys_seconds(date::sys_days(date::year(9999) / 1 / 1));
    tz->last_transition_s_ = tz->zone_->get_info(far).begin.time_since_epoch().count();
  } catch (const std::exception& e) {
    return Status(StatusCode::kNotFound, "unknown time zone '" + name + "' (" + e.what() + " under " + kZoneDir +
                                             "; zone names are IANA's, e.g. America/New_York, Asia/Shanghai)");
  }
  const std::string footer = read_footer(std::string(kZoneDir) + "/" + name);
  if (!footer.empty()) {
    auto rule = PosixTzRule::parse(footer);
    if (!rule.is_ok()) return rule.status().with_context("time zone '" + name + "'");
    tz->rule_ = rule.value();
  }
  return std::shared_ptr<const TimeZone>(std::move(tz));
}

int32_t TimeZone::utc_offset_s(int64_t unix_s) const {
  if (rule_ && unix_s >= last_transition_s_) return rule_->utc_offset_s(unix_s);
  const auto info = zone_->get_info(date::sys_seconds(std::chrono::seconds(unix_s)));
  return int32_t(info.offset.count());
}

int64_t TimeZone::local_seconds(int64_t utc_ns) const {
  const int64_t utc_s = floor_div(utc_ns, kNsPerSecond);
  return utc_s + utc_offset_s(utc_s);
}

}  // namespace ts
