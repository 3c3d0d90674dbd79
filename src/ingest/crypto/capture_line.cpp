#include "ingest/crypto/capture_line.h"

#include <cstdint>

namespace ts::crypto {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "1633998512.0633569" (seconds, decimal) → ns; false if malformed.
bool seconds_to_ns(std::string_view s, int64_t& ns) {
  int64_t whole = 0, frac = 0, scale = 1'000'000'000;
  size_t i = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    whole = whole * 10 + (s[i] - '0');
    if (whole > 9'000'000'000LL) return false;
  }
  if (i == 0) return false;
  if (i < s.size()) {
    if (s[i] != '.') return false;
    for (++i; i < s.size(); ++i) {
      if (!is_digit(s[i])) return false;
      scale /= 10;
      frac += (s[i] - '0') * scale;
    }
  }
  ns = whole * 1'000'000'000 + frac;
  return true;
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

CaptureLine bad(const char* why) {
  CaptureLine c;
  c.why = why;
  return c;
}

CaptureLine url_line(std::string_view line) {
  CaptureLine c;
  const size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return bad("URL without a direction");
  c.url = line.substr(0, sp);
  std::string_view rest = line.substr(sp + 1);
  if (rest.starts_with("<-> ")) {
    c.kind = CaptureKind::kConnect;
    if (!seconds_to_ns(rest.substr(4), c.recv_ns)) return bad("connect line without an epoch time");
    return c;
  }
  if (rest.starts_with("<- ")) {
    c.kind = CaptureKind::kSent;
    rest.remove_prefix(3);
  } else if (rest.starts_with("-> ")) {
    c.kind = CaptureKind::kRest;
    rest.remove_prefix(3);
  } else {
    return bad("URL line without <-, -> or <->");
  }
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos || !seconds_to_ns(rest.substr(0, colon), c.recv_ns)) {
    return bad("URL line without '<epoch>: '");
  }
  c.json = rest.substr(colon + 2);
  return c;
}

}  // namespace

CaptureLine parse_capture_line(std::string_view line) {
  line = trim_left(line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) {
    CaptureLine c;
    c.kind = CaptureKind::kBlank;
    return c;
  }
  if (line.front() == '{' || line.front() == '[') {
    CaptureLine c;
    c.kind = CaptureKind::kMessage;
    c.json = line;
    return c;
  }
  if (line.starts_with("ws://") || line.starts_with("wss://") || line.starts_with("http://") ||
      line.starts_with("https://")) {
    return url_line(line);
  }
  if (!is_digit(line.front())) return bad("neither JSON nor a receive time");
  size_t i = 0;
  while (i < line.size() && (is_digit(line[i]) || line[i] == '.')) ++i;
  const std::string_view time = line.substr(0, i);
  std::string_view rest = line.substr(i);
  CaptureLine c;
  c.kind = CaptureKind::kMessage;
  if (rest.starts_with(": ")) {
    if (!seconds_to_ns(time, c.recv_ns)) return bad("bad epoch seconds before ':'");
    c.json = trim_left(rest.substr(2));
    return c;
  }
  if (!rest.starts_with(" ") || time.find('.') != std::string_view::npos) return bad("bad receive time prefix");
  if (time.size() > 19) return bad("receive time too long");
  uint64_t v = 0;
  for (char ch : time) v = v * 10 + uint64_t(ch - '0');  // 19 digits fit in uint64
  // By size: ns (≥ 1e17), ms (≥ 1e11), else seconds. A time past int64 ns (April 2262) is bad: it
  // overflowed (UB; found by crypto_fuzz with UBSan).
  const uint64_t scale = v >= 100'000'000'000'000'000ULL ? 1 : v >= 100'000'000'000ULL ? 1'000'000 : 1'000'000'000;
  if (v > uint64_t(INT64_MAX) / scale) return bad("receive time past the year 2262");
  c.recv_ns = int64_t(v * scale);
  rest = trim_left(rest);
  if (!rest.empty() && rest.front() != '{' && rest.front() != '[') {
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos) return bad("event name without JSON");
    c.event = rest.substr(0, sp);
    rest = trim_left(rest.substr(sp + 1));
  }
  c.json = rest;
  if (c.json.empty()) return bad("receive time without a message");
  return c;
}

}  // namespace ts::crypto
