#include "http/request_head.h"

#include <algorithm>
#include <cctype>

namespace ts::http {

namespace {
constexpr size_t kMaxLine = 4096;  // a chunk-size or trailer line

std::string lower_trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool name_is(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  return true;
}

// Calls f(line) for every header line of `head` (after the request line, before the blank line).
template <typename F>
void for_each_header(std::string_view head, F&& f) {
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos) {
    pos += 2;
    const size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) return;
    f(head.substr(pos, end - pos));
    pos = end;
  }
}
}  // namespace

size_t request_head_end(std::string_view bytes) {
  const size_t p = bytes.find("\r\n\r\n");
  return p == std::string_view::npos ? 0 : p + 4;
}

RequestHead parse_request_head(std::string_view head) {
  RequestHead h;
  bool has_length = false, chunked = false;
  for_each_header(head, [&](std::string_view line) {
    if (name_is(line, "content-length")) {
      const std::string v = lower_trim(line.substr(15));
      uint64_t n = 0;
      const bool digits = !v.empty() && v.size() <= 18 && std::all_of(v.begin(), v.end(), [](char c) {
        return c >= '0' && c <= '9';
      });
      if (digits) n = std::stoull(v);
      if (!digits || (has_length && n != h.content_length)) {
        h.bad = true;
        h.why = "bad Content-Length '" + v + "'";
      }
      has_length = true;
      h.content_length = n;
    } else if (name_is(line, "transfer-encoding")) {
      const std::string v = lower_trim(line.substr(18));
      if (v != "chunked") {
        h.bad = true;
        h.why = "unsupported Transfer-Encoding '" + v + "' (only chunked)";
      }
      chunked = true;
    } else if (name_is(line, "expect")) {
      h.expect_continue = lower_trim(line.substr(7)) == "100-continue";
    }
  });
  if (has_length && chunked && !h.bad) {
    h.bad = true;
    h.why = "both Content-Length and Transfer-Encoding";
  }
  if (chunked) {
    h.body = RequestHead::Body::kChunked;
  } else if (has_length && h.content_length > 0) {
    h.body = RequestHead::Body::kLength;
  }
  return h;
}

std::string rewrite_request_head(std::string_view head, uint64_t body_bytes) {
  const size_t first = head.find("\r\n");
  std::string out(head.substr(0, first + 2));
  for_each_header(head, [&](std::string_view line) {
    if (name_is(line, "transfer-encoding") || name_is(line, "expect") || name_is(line, "content-length")) return;
    out.append(line);
    out += "\r\n";
  });
  if (body_bytes > 0) out += "Content-Length: " + std::to_string(body_bytes) + "\r\n";
  out += "\r\n";
  return out;
}

ChunkedDecoder::State ChunkedDecoder::feed(std::string_view in, std::string* body, size_t* consumed) {
  size_t i = 0;
  while (i < in.size() && state_ == State::kMore) {
    if (phase_ == Phase::kData) {
      const size_t n = size_t(std::min<uint64_t>(remaining_, in.size() - i));
      body->append(in.data() + i, n);
      i += n;
      remaining_ -= n;
      if (remaining_ == 0) phase_ = Phase::kDataEnd;
      continue;
    }
    // A line: size, the CRLF after data, or a trailer line.
    const char c = in[i++];
    if (c != '\n') {
      // After a chunk's data only its CRLF may come; any other line is bounded.
      if (line_.size() >= kMaxLine || (phase_ == Phase::kDataEnd && (c != '\r' || !line_.empty()))) {
        state_ = State::kBad;
      }
      line_ += c;
      continue;
    }
    if (line_.empty() || line_.back() != '\r') {
      state_ = State::kBad;
      break;
    }
    line_.pop_back();
    if (phase_ == Phase::kDataEnd) {
      if (!line_.empty()) state_ = State::kBad;
      phase_ = Phase::kSize;
    } else if (phase_ == Phase::kTrailer) {
      if (line_.empty()) state_ = State::kDone;
    } else {  // kSize: hex digits, then optional ";ext"
      const std::string_view s(line_.data(), line_.find(';') == std::string::npos ? line_.size() : line_.find(';'));
      uint64_t n = 0;
      size_t digits = 0;
      for (char h : s) {
        if (h == ' ' || h == '\t') continue;
        const int v = std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                      : (h >= 'a' && h <= 'f')                    ? h - 'a' + 10
                      : (h >= 'A' && h <= 'F')                    ? h - 'A' + 10
                                                                  : -1;
        if (v < 0 || ++digits > 15) {
          state_ = State::kBad;
          break;
        }
        n = n * 16 + uint64_t(v);
      }
      if (state_ != State::kMore) break;
      if (digits == 0) {
        state_ = State::kBad;
      } else if (n == 0) {
        phase_ = Phase::kTrailer;
      } else if (body->size() + n > max_) {
        state_ = State::kTooLarge;
      } else {
        remaining_ = n;
        phase_ = Phase::kData;
      }
    }
    line_.clear();
  }
  *consumed = i;
  return state_;
}

}  // namespace ts::http
