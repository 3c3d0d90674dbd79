// Blocks of device memory and of mapped page-locked host memory that destroyed execution contexts
// gave back, kept for the next context to take instead of calling cudaMalloc / cudaHostAlloc.
//
// PERF NOTE: a hot swap creates the new version's contexts while the old ones serve, then releases
// the old ones. cudaFree and cudaFreeHost synchronize the device and cudaMalloc / cudaHostAlloc take
// the driver's locks: each stalled every serving stream for a while, and together they made the P99
// around a swap (GRU-2x128, 4 workers: the first 5 ms and the release were the worst bins;
// bench/results/serve-h200-20261130-2306-swap-blockcache-pause1000.json and the runs before it).
// With the cache, a swap to a version of the same shapes allocates and frees nothing.
//
// Contract: a block is given back only when no queued work can still touch it (its context's
// streams synchronized). Blocks are per device (the current one at the call). Bounded: beyond
// kMaxCachedDeviceBytes / kMaxCachedHostBytes a given-back block is freed for real; a failed
// cudaMalloc empties the device cache and retries once. Thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ts::engine::cuda {

enum class BlockKind { kDevice, kMappedHost };

inline constexpr size_t kMaxCachedDeviceBytes = size_t(2) << 30;
inline constexpr size_t kMaxCachedHostBytes = size_t(512) << 20;

// A cached block of at least min_bytes and at most block_cache_slack(min_bytes) over it (the smallest such),
// or false. A context holds (and memory_bytes() reports) the whole block it took, so a loose
// bound inflates what a small request costs: with "at most 2 × min_bytes" a 32 MiB cuBLASLt
// workspace took 48-63 MiB blocks a previous case's context had freed (shape sweep eng4, batch 1).
// A hot swap to a version of the same shapes takes blocks of exactly the sizes it asks for.
inline size_t block_cache_slack(size_t min_bytes) { return std::max(min_bytes / 8, size_t(64) << 10); }
bool block_cache_take(BlockKind kind, size_t min_bytes, void** p, size_t* bytes);
// Keeps the block (or frees it when the cache is full).
void block_cache_give(BlockKind kind, void* p, size_t bytes);
// Frees every cached block of this kind on the current device; returns the bytes freed.
size_t block_cache_trim(BlockKind kind);

struct BlockCacheStats {
  uint64_t takes = 0, gives = 0;  // blocks reused / given back, since the process started
  size_t cached_bytes = 0;        // held now, this kind, every device
};
BlockCacheStats block_cache_stats(BlockKind kind);

}  // namespace ts::engine::cuda
