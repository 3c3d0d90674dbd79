// Request framing as the connection gate reads it: head end, body framing, the rewritten head
// and the chunked decoder fed in every split (bytes arrive in any pieces).
#include <gtest/gtest.h>

#include "http/request_head.h"

namespace ts::http {
namespace {

TEST(RequestHead, FindsTheEndOfTheHead) {
  EXPECT_EQ(request_head_end("GET / HTTP/1.1\r\nHost: x\r\n"), 0u);
  EXPECT_EQ(request_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY"), 27u);
}

TEST(RequestHead, ReadsTheBodyFraming) {
  auto h = parse_request_head("POST /a HTTP/1.1\r\nHost: x\r\ncontent-length: 12\r\n\r\n");
  EXPECT_FALSE(h.bad);
  EXPECT_EQ(h.body, RequestHead::Body::kLength);
  EXPECT_EQ(h.content_length, 12u);
  h = parse_request_head("POST /a HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\nExpect: 100-continue\r\n\r\n");
  EXPECT_FALSE(h.bad);
  EXPECT_EQ(h.body, RequestHead::Body::kChunked);
  EXPECT_TRUE(h.expect_continue);
  EXPECT_EQ(parse_request_head("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").body, RequestHead::Body::kNone);
}

TEST(RequestHead, RefusesAmbiguousFraming) {
  // Each is a request-smuggling shape: two servers could disagree on where the body ends.
  const char* bad[] = {
      "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
      "POST / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
      "POST / HTTP/1.1\r\nContent-Length: 5x\r\n\r\n",
      "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
      "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
  };
  for (const char* head : bad) EXPECT_TRUE(parse_request_head(head).bad) << head;
  EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n").bad);
}

TEST(RequestHead, RewriteFramesTheDecodedBodyByLength) {
  const std::string out = rewrite_request_head(
      "POST /api/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nX-A: 1\r\n\r\n", 33);
  EXPECT_EQ(out, "POST /api/x HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nContent-Length: 33\r\n\r\n");
}

TEST(ChunkedDecoder, DecodesInEverySplit) {
  const std::string wire = "5;ext=1\r\nhello\r\n1A\r\n, chunked bodies are fine.\r\n0\r\nX-Trailer: y\r\n\r\nNEXT";
  const std::string body = "hello, chunked bodies are fine.";
  for (size_t split = 0; split <= wire.size(); ++split) {
    ChunkedDecoder d(1024);
    std::string out;
    size_t used1 = 0, used2 = 0;
    auto st = d.feed(std::string_view(wire).substr(0, split), &out, &used1);
    if (st == ChunkedDecoder::State::kMore) st = d.feed(std::string_view(wire).substr(split), &out, &used2);
    ASSERT_EQ(st, ChunkedDecoder::State::kDone) << "split at " << split;
    EXPECT_EQ(out, body);
    EXPECT_EQ(used1 + used2, wire.size() - 4) << "the bytes after the body are the next request's";
  }
}

TEST(ChunkedDecoder, StopsAtTheLimitAndOnBadFraming) {
  ChunkedDecoder d(10);
  std::string out;
  size_t used = 0;
  EXPECT_EQ(d.feed("8\r\n12345678\r\n8\r\n", &out, &used), ChunkedDecoder::State::kTooLarge);
  EXPECT_EQ(out.size(), 8u) << "nothing past the limit is kept";
  const char* bad[] = {"zz\r\n", "\r\n", "5\r\nhelloXX", "5\nhello\r\n", "10000000000000000\r\n"};
  for (const char* b : bad) {
    ChunkedDecoder e(1 << 20);
    std::string o;
    EXPECT_EQ(e.feed(b, &o, &used), ChunkedDecoder::State::kBad) << b;
  }
  ChunkedDecoder longline(1 << 20);
  EXPECT_EQ(longline.feed(std::string(5000, '1'), &out, &used), ChunkedDecoder::State::kBad);
}

}  // namespace
}  // namespace ts::http
