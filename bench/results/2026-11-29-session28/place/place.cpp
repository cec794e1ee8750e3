// host-backend placement check: fill kv_cache<u64, 8, 8> to 0.75 in batches (concurrent host
// tiles), count entries held in their first bucket.
#include <cstdio>
#include <vector>
#include "warpkv/cache/kv_cache.hpp"
using u64 = std::uint64_t;
static u64 fmix(u64 k) { k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ull; k ^= k >> 33; return k; }
int main(int, char** argv) {
  warpkv::cache_config cfg;
  cfg.capacity = std::size_t{1} << 18;
  cfg.value_bytes = 8;
  warpkv::execution ex = warpkv::execution::host();
  warpkv::kv_cache<u64, 8, 8> cache(cfg, ex);
  const std::size_t batch = 1 << 12;
  std::vector<u64> keys(batch), vals(batch);
  std::vector<warpkv::status> st(batch);
  u64 next = 1;
  for (double load : {0.5, 0.625, 0.75}) {
    while ((double)(next - 1) < load * cache.capacity()) {
      for (std::size_t i = 0; i < batch; ++i) { keys[i] = fmix(next + i) | 1; vals[i] = i; }
      cache.execute_resident(batch, nullptr, warpkv::cache_op::set, keys.data(), vals.data(), nullptr, st.data());
      next += batch;
    }
    const auto ref = cache.ref();
    std::size_t first = 0, held = 0;
    for (std::size_t s = 0; s < cache.capacity(); ++s) {
      if (ref.slot_empty(s)) continue;
      ++held;
      if (ref.buckets_of(ref.slot_key(s)).first == s / 8) ++first;
    }
    std::printf("%s load %.3f held %zu first %zu (%.4f)\n", argv[1], load, held, first, (double)first / held);
  }
}
