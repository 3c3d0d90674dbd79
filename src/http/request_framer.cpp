#include "http/request_framer.h"

#include <string_view>
#include <utility>

namespace ts::http {

const char* gate_refusal_name(GateRefusal r) {
  switch (r) {
    case GateRefusal::kTooManyConnections: return "too_many_connections";
    case GateRefusal::kTooManyFromClient: return "too_many_from_client";
    case GateRefusal::kTimeout: return "timeout";
    case GateRefusal::kHeaderTooLarge: return "header_too_large";
    case GateRefusal::kBodyTooLarge: return "body_too_large";
    case GateRefusal::kBadFraming: return "bad_request";
  }
  return "?";
}

void RequestFramer::reset() {
  head_len_ = 0;
  chunked_.reset();
  chunk_pos_ = 0;
  body_.clear();
  continue_due_ = false;
}

RequestFramer::Step RequestFramer::refuse(GateRefusal kind, int status, std::string why) {
  refusal_ = Refusal{kind, status, std::move(why)};
  const bool continue_due = continue_due_;  // a head read in this call still gets its 100 first
  reset();
  continue_due_ = continue_due;
  return Step::kRefuse;
}

RequestFramer::Step RequestFramer::advance(std::string& in, const HttpLimits& limits) {
  if (head_len_ == 0) {
    // A head is at most max_header_bytes, its blank line included. (Searching max + 4 bytes but
    // refusing past max made a head of max + 1 .. max + 4 bytes pass when it arrived in one read
    // and 431 when it arrived in pieces: found by http_fuzz's whole-versus-pieces check.)
    const size_t max_head = size_t(limits.max_header_bytes);
    const size_t end = request_head_end(std::string_view(in).substr(0, max_head));
    if (end == 0) {
      if (in.size() >= max_head) {
        return refuse(GateRefusal::kHeaderTooLarge, 431,
                      "the request head is longer than " + std::to_string(max_head) + " bytes");
      }
      return Step::kMore;
    }
    head_ = parse_request_head(std::string_view(in).substr(0, end));
    if (head_.bad) return refuse(GateRefusal::kBadFraming, 400, head_.why);
    if (head_.body == RequestHead::Body::kLength && head_.content_length > uint64_t(limits.max_body_bytes)) {
      return refuse(GateRefusal::kBodyTooLarge, 413,
                    "the body (" + std::to_string(head_.content_length) + " bytes) is larger than " +
                        std::to_string(limits.max_body_bytes) + " bytes");
    }
    head_len_ = end;
    if (head_.body == RequestHead::Body::kChunked) {
      chunked_ = std::make_unique<ChunkedDecoder>(uint64_t(limits.max_body_bytes));
      chunk_pos_ = end;
      body_.clear();
    }
    continue_due_ = head_.expect_continue && head_.body != RequestHead::Body::kNone;
  }
  const std::string_view head = std::string_view(in).substr(0, head_len_);
  size_t used = 0;  // bytes of `in` that belong to this request
  switch (head_.body) {
    case RequestHead::Body::kNone:
      used = head_len_;
      request_ = head_.expect_continue ? rewrite_request_head(head, 0) : std::string(head);
      break;
    case RequestHead::Body::kLength: {
      if (in.size() - head_len_ < head_.content_length) return Step::kMore;
      used = head_len_ + size_t(head_.content_length);
      request_ = head_.expect_continue ? rewrite_request_head(head, head_.content_length) : std::string(head);
      request_.append(in, head_len_, size_t(head_.content_length));
      break;
    }
    case RequestHead::Body::kChunked: {
      size_t consumed = 0;
      const auto st = chunked_->feed(std::string_view(in).substr(chunk_pos_), &body_, &consumed);
      chunk_pos_ += consumed;
      if (st == ChunkedDecoder::State::kTooLarge) {
        return refuse(GateRefusal::kBodyTooLarge, 413,
                      "the chunked body is larger than " + std::to_string(limits.max_body_bytes) + " bytes");
      }
      if (st == ChunkedDecoder::State::kBad) return refuse(GateRefusal::kBadFraming, 400, "malformed chunked body");
      if (st == ChunkedDecoder::State::kMore) {
        // Keep only what the decoder has not read: the decoded body holds the rest.
        in.erase(head_len_, chunk_pos_ - head_len_);
        chunk_pos_ = head_len_;
        return Step::kMore;
      }
      used = chunk_pos_;
      request_ = rewrite_request_head(head, body_.size()) + body_;
      break;
    }
  }
  in.erase(0, used);
  head_len_ = 0;
  chunked_.reset();
  body_.clear();
  return Step::kRequest;
}

}  // namespace ts::http
