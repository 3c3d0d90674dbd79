#pragma once
// The read limits of the websocket client (ws_client.cpp), in a header of their own so that the
// websocket fuzz target (fuzz/ws_fuzz.cpp) reads frames with Boost.Beast under the same limits
// without the coroutine client (which clang 14 cannot build). No Boost include: the template
// takes any Beast websocket stream.
#include <cstddef>

namespace ts {

// A message (all its frames together) larger than this ends the connection (Beast's
// websocket::error::message_too_big); the client reconnects after its backoff.
constexpr size_t kWsMessageMaxBytes = size_t(64) << 20;
// A REST snapshot body larger than this fails the snapshot, and with it the connection attempt.
constexpr size_t kRestBodyMaxBytes = size_t(256) << 20;

// Sets the limits above on a Beast websocket stream (plain or TLS) before it reads a frame.
template <class WsStream>
void apply_ws_read_limits(WsStream& s) {
  s.read_message_max(kWsMessageMaxBytes);
}

}  // namespace ts
