// RequestFramer (http/request_framer.h): the connection gate's reading of requests out of a
// connection's bytes, whatever pieces the bytes arrive in.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "framing_util.h"
#include "http/request_framer.h"

namespace ts::http {
namespace {

using testing::Framed;
using testing::frame;

TEST(RequestFramer, PipelinedRequestsComeOutWholeInAnySplit) {
  const std::string wire =
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /api/silences HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
      "POST /api/models HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nX-A: 1\r\n\r\n"
      "4\r\n{\"b\"\r\n3;e=1\r\n:2}\r\n0\r\nT: y\r\n\r\n"
      "GET /api/alerts?symbol=GOOG HTTP/1.1\r\n";
  const std::vector<std::string> expected = {
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
      "POST /api/silences HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
      "POST /api/models HTTP/1.1\r\nX-A: 1\r\nContent-Length: 7\r\n\r\n{\"b\":2}",
  };
  const HttpLimits limits;
  for (size_t piece : {size_t(0), size_t(1), size_t(2), size_t(7), size_t(64)}) {
    const Framed f = frame(wire, piece, limits);
    EXPECT_EQ(f.requests, expected) << "pieces of " << piece;
    EXPECT_EQ(f.continues, 1) << "one 100 Continue, for the chunked request that asked";
    EXPECT_EQ(f.refused_status, 0);
    EXPECT_EQ(f.left, "GET /api/alerts?symbol=GOOG HTTP/1.1\r\n") << "the next request's head, still open";
  }
}

TEST(RequestFramer, RefusesOversizedHeadsAndBodiesBeforeReadingThem) {
  HttpLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 1024;
  const std::string long_head = "GET / HTTP/1.1\r\nX-Pad: " + std::string(1100, 'a') + "\r\n\r\n";
  const std::string big_length = "POST / HTTP/1.1\r\nContent-Length: 1025\r\n\r\n";  // no body sent
  const std::string big_chunks = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + std::string(1024, 'b') +
                                 "\r\n1\r\nc\r\n" + std::string(1 << 20, 'd');
  const std::string smuggled = "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t piece : {size_t(0), size_t(1), size_t(100)}) {
    EXPECT_EQ(frame(long_head, piece, limits).refused_status, 431) << piece;
    EXPECT_EQ(frame(big_length, piece, limits).refused_status, 413) << piece;
    EXPECT_EQ(frame(big_chunks, piece, limits).refused_status, 413) << piece;
    EXPECT_EQ(frame(smuggled, piece, limits).refused_status, 400) << piece;
  }
  RequestFramer f;
  std::string in = big_length;
  ASSERT_EQ(f.advance(in, limits), RequestFramer::Step::kRefuse);
  EXPECT_EQ(f.refusal().kind, GateRefusal::kBodyTooLarge);
  EXPECT_EQ(f.refusal().why, "the body (1025 bytes) is larger than 1024 bytes");
  EXPECT_STREQ(gate_refusal_name(f.refusal().kind), "body_too_large");
}

// A head of max_header_bytes (its blank line included) passes and one byte more is 431, whether it
// arrives in one read or in pieces (heads of max + 1 .. max + 4 bytes used to pass in one read
// only: http_fuzz, fuzz/corpus/http_fuzz/crash-head-limit-depends-on-split).
TEST(RequestFramer, TheHeadLimitHoldsHoweverTheBytesArrive) {
  HttpLimits limits;
  limits.max_header_bytes = 1024;
  auto head_of = [](size_t bytes) {
    const std::string start = "GET / HTTP/1.1\r\nX-Pad: ";
    return start + std::string(bytes - start.size() - 4, 'a') + "\r\n\r\n";
  };
  for (size_t piece : {size_t(0), size_t(1), size_t(3), size_t(512)}) {
    const Framed at_limit = frame(head_of(1024), piece, limits);
    EXPECT_EQ(at_limit.requests.size(), 1u) << piece;
    EXPECT_EQ(at_limit.refused_status, 0) << piece;
    for (size_t over : {1025, 1026, 1028, 1029}) {
      EXPECT_EQ(frame(head_of(over), piece, limits).refused_status, 431) << over << " bytes in pieces of " << piece;
    }
  }
}

}  // namespace
}  // namespace ts::http
