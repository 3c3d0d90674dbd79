#pragma once
// What travels between a shard and the model server (src/serve/model_server.h).
//
//   shard ──InferenceRequest──► scheduler (batcher) ──batch──► worker (engine context)
//     ▲                              │ superseded / expired           │ probabilities
//     └────────InferenceResult───────┴────────────────────────────────┘
//
// A request names a window slot in its shard's WindowArena rather than carrying the T×F floats:
// the slot belongs to the server from the moment the request is pushed until its result (of any
// code) comes back, and to the shard otherwise. Every request gets exactly one result.
#include <cstdint>
#include <type_traits>

#include "core/event.h"
#include "core/stage_times.h"

namespace ts::serve {

struct InferenceRequest {
  SymbolId symbol = kInvalidSymbol;
  uint32_t slot = 0;          // window slot in the owning shard's arena
  uint16_t shard = 0;         // the owning shard (set by ShardPort::submit)
  int64_t enqueue_ns = 0;     // mono_ns when the shard queued it
  int64_t deadline_ns = 0;    // mono_ns after which the result is useless (dropped, counted)
  int64_t exch_ts_ns = 0;     // the triggering event
  uint64_t event_seq = 0;
  Price price = 0;
  StageTimes t;               // recv/book/features of the triggering event
};

enum class ResultCode : uint8_t {
  kOk = 0,
  kSuperseded,   // a newer window of the same symbol replaced it in the queue (latest-wins)
  kExpired,      // its deadline passed before it could run
  kQueueFull,    // the server's queue was full (bounded queue, overload)
  kFailed,       // the engine failed and the CPU retry failed too
  kStopped,      // the server stopped before running it
};
const char* result_code_name(ResultCode c);

struct InferenceResult {
  InferenceRequest request;
  ResultCode code = ResultCode::kOk;
  float probability = 0;
  uint32_t model_version = 0;
  bool shadow = false;          // scored by the shadow version: comes after the serving version's
                                // result of the same request, owns no slot, carries no window
  bool fallback = false;        // ran on the CPU fallback engine
  int64_t dispatch_ns = 0;      // mono_ns the batch left the queue
  int64_t done_ns = 0;          // mono_ns the batch's outputs were ready
};

static_assert(std::is_trivially_copyable_v<InferenceRequest>);
static_assert(std::is_trivially_copyable_v<InferenceResult>);

}  // namespace ts::serve
