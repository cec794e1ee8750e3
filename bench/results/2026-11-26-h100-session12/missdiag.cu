// Throwaway: hopscotch u32 tile 4, C = 2^27, LF 0.9: table statistics and find-miss timing per include tree.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "warpkv/hopscotch/hopscotch_map.hpp"
using namespace warpkv;
using map_t = hopscotch_map<std::uint32_t, std::uint32_t, 4>;
struct peek : map_t { using map_t::map_t; auto raw() const { return this->slots_.to_vector(); } };
static std::uint32_t mix32(std::uint32_t x) { x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x; }
int main(int argc, char** argv) {
  const double lf = argc > 1 ? atof(argv[1]) : 0.9;
  const std::size_t C = std::size_t(1) << 27;
  hopscotch_config cfg; cfg.max_load_factor = 0.95;
  peek map(std::size_t(C * 0.95), cfg, execution::gpu());
  const std::size_t n = std::size_t(lf * map.capacity());
  std::vector<std::uint32_t> keys(n), miss(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = mix32(std::uint32_t(i) * 2654435761u + 7u) & 0x7fffffffu;  // (not bijective after the mask: duplicates possible, harmless)
  for (std::size_t i = 0; i < n; ++i) miss[i] = (mix32(std::uint32_t(i) * 2654435761u + 7u) & 0x7fffffffu) | 0x80000000u;
  auto dk = buffer<std::uint32_t>::from_host(keys, execution::gpu());
  auto dm = buffer<std::uint32_t>::from_host(miss, execution::gpu());
  buffer<std::uint32_t> out(n, execution::gpu());
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaEventRecord(a);
  map.insert(dk.data(), dk.data(), n);
  cudaEventRecord(b); cudaEventSynchronize(b); float ins; cudaEventElapsedTime(&ins, a, b);
  auto time_find = [&](const std::uint32_t* k) {
    std::vector<float> ms;
    for (int r = 0; r < 6; ++r) { cudaEventRecord(a); map.find(k, n, out.data()); cudaEventRecord(b); cudaEventSynchronize(b); float m; cudaEventElapsedTime(&m, a, b); if (r) ms.push_back(m); }
    std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
  };
  const float fh = time_find(dk.data()), fm = time_find(dm.data());
  const auto s = map.raw();
  std::size_t flagged = 0, claimed = 0, windows = 0, members = 0, far = 0, nonempty_buckets = 0; double sumoff = 0;
  const std::uint32_t empty = 0xffffffffu;
  for (std::size_t i = 0; i < map.capacity(); ++i) {
    const std::uint64_t h = s[i].meta;
    if ((h >> 33) & 1) ++flagged;
    const std::uint32_t bm = std::uint32_t(h);
    if (bm) ++nonempty_buckets;
    for (int w = 0; w < 8; ++w) if ((bm >> (4 * w)) & 0xf) ++windows;
    for (int o = 0; o < 32; ++o) if ((bm >> o) & 1) { ++members; sumoff += o; if (o >= 4) ++far; }
    const std::uint32_t key = std::uint32_t(s[i].pair);
    if (key == (empty ^ 1u)) ++claimed;
  }
  printf("{\"lf\":%.2f,\"capacity\":%zu,\"keys\":%zu,\"size\":%zu,\"stashed\":%zu,\"insert_gops\":%.3f,\"find_hit_gops\":%.3f,\"find_miss_gops\":%.3f,\"flagged_buckets\":%zu,\"claimed_slots\":%zu,\"windows_per_nonempty_bucket\":%.3f,\"windows_per_bucket\":%.3f,\"mean_offset\":%.3f,\"members_beyond_first_window\":%.4f}\n",
         lf, map.capacity(), n, map.size(), map.stashed(), n / (ins * 1e6), n / (fh * 1e6), n / (fm * 1e6), flagged, claimed,
         double(windows) / nonempty_buckets, double(windows) / map.capacity(), sumoff / members, double(far) / members);
  return 0;
}
