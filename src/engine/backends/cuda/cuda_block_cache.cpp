#include "engine/backends/cuda/cuda_block_cache.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

namespace ts::engine::cuda {
namespace {

struct Cache {
  std::mutex mu;
  std::multimap<std::pair<int, size_t>, void*> blocks[2];  // by (device, bytes)
  size_t cached[2] = {0, 0};
  uint64_t takes[2] = {0, 0}, gives[2] = {0, 0};
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: contexts may be released during static teardown
  return *c;
}

int current_device() {
  int d = 0;
  cudaGetDevice(&d);
  return d;
}

void free_block(BlockKind kind, void* p) {
  if (kind == BlockKind::kDevice) cudaFree(p);
  else cudaFreeHost(p);
}

}  // namespace

bool block_cache_take(BlockKind kind, size_t min_bytes, void** p, size_t* bytes) {
  const int k = int(kind), dev = current_device();
  Cache& c = cache();
  std::lock_guard<std::mutex> lk(c.mu);
  auto it = c.blocks[k].lower_bound({dev, min_bytes});
  if (it == c.blocks[k].end() || it->first.first != dev || it->first.second > min_bytes + block_cache_slack(min_bytes)) return false;
  *p = it->second;
  *bytes = it->first.second;
  c.cached[k] -= it->first.second;
  ++c.takes[k];
  c.blocks[k].erase(it);
  return true;
}

void block_cache_give(BlockKind kind, void* p, size_t bytes) {
  if (!p) return;
  const int k = int(kind);
  const size_t limit = kind == BlockKind::kDevice ? kMaxCachedDeviceBytes : kMaxCachedHostBytes;
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lk(c.mu);
    if (c.cached[k] + bytes <= limit) {
      c.blocks[k].emplace(std::make_pair(current_device(), bytes), p);
      c.cached[k] += bytes;
      ++c.gives[k];
      return;
    }
  }
  free_block(kind, p);
}

size_t block_cache_trim(BlockKind kind) {
  const int k = int(kind), dev = current_device();
  Cache& c = cache();
  std::multimap<std::pair<int, size_t>, void*> mine;
  {
    std::lock_guard<std::mutex> lk(c.mu);
    auto lo = c.blocks[k].lower_bound({dev, 0});
    auto hi = c.blocks[k].lower_bound({dev + 1, 0});
    mine.insert(lo, hi);
    c.blocks[k].erase(lo, hi);
  }
  size_t freed = 0;
  for (auto& [key, p] : mine) {
    freed += key.second;
    free_block(kind, p);
  }
  std::lock_guard<std::mutex> lk(c.mu);
  c.cached[k] -= freed;
  return freed;
}

BlockCacheStats block_cache_stats(BlockKind kind) {
  const int k = int(kind);
  Cache& c = cache();
  std::lock_guard<std::mutex> lk(c.mu);
  return BlockCacheStats{c.takes[k], c.gives[k], c.cached[k]};
}

}  // namespace ts::engine::cuda
