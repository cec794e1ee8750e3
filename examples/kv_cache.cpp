// warpkv::kv_cache: a fixed-size cache (cuckoo buckets, LRU eviction, optional TTL). Values are
// byte strings of value_bytes each, passed in buffers of value_stride() bytes per key.
// It never grows: when full, a set evicts the least recently used entry of the key's buckets.
#include <warpkv/cache/kv_cache.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  using warpkv::status;
  warpkv::cache_config cfg;
  cfg.capacity = 256;    // entries (whole buckets of 4)
  cfg.value_bytes = 16;  // bytes per value
  warpkv::kv_cache<std::uint64_t> cache(cfg);
  const std::size_t stride = cache.value_stride();

  // set 1000 keys into a cache of 256 slots: the older ones get evicted.
  const std::size_t n = 1000;
  std::vector<std::uint64_t> keys(n);
  std::vector<std::byte> values(n * stride);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = i + 1;
    const std::uint64_t v = 1000 + i;
    std::memcpy(values.data() + i * stride, &v, sizeof v);
  }
  std::vector<status> st(n);
  for (std::size_t first = 0; first < n; first += 100)  // ten batches, in order: later keys are more recent
    cache.set(std::span(keys).subspan(first, 100), std::span<const std::byte>(values).subspan(first * stride, 100 * stride),
              std::span(st).subspan(first, 100));

  // get: a hit returns the value last set, a miss is not_found; never a wrong value.
  std::vector<std::byte> out(n * stride);
  cache.get(keys, out, st);
  std::size_t hits = 0, wrong = 0, recent_hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (st[i] != status::found) continue;
    ++hits;
    if (i >= n - 100) ++recent_hits;
    std::uint64_t v = 0;
    std::memcpy(&v, out.data() + i * stride, sizeof v);
    if (v != 1000 + i) ++wrong;
  }
  const bool ok = wrong == 0 && hits > 0 && hits <= cache.capacity() && recent_hits > 50;
  std::printf("kv_cache: capacity %zu, %zu of %zu keys still cached (%zu of the last 100), %zu wrong: %s\n",
              cache.capacity(), hits, n, recent_hits, wrong, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
