// Throwaway E4 driver (issue 24): hopscotch_map<u32, u32, T, hopscotch_buckets> (the H64 layout as a
// map) at ~2^27 slots: insert / find hit / find miss per load factor, CUDA events, median of 5
// after a warm-up, every find verified. Prints JSON lines.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <memory>
#include <algorithm>
#include <cuda_runtime.h>
#include "warpkv/hopscotch/hopscotch_map.hpp"
using namespace warpkv;
static std::uint32_t mix32(std::uint32_t x) { x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x; }
static std::uint32_t key_of(std::uint32_t i) { std::uint32_t k = mix32(i * 2654435761u + 7u); return k >= 0xfffffffdu ? mix32(i ^ 0x5bd1e995u) & 0x7fffffffu : k; }
template <int T>
void run(double lf, const char* commit) {
  using map_t = hopscotch_map<std::uint32_t, std::uint32_t, T, hopscotch_buckets>;
  hopscotch_config cfg; cfg.max_load_factor = 0.95;
  const std::size_t slots = std::size_t(7) << 24;
  map_t probe_map(std::size_t(slots * 0.95), cfg, execution::gpu());
  const std::size_t cap = probe_map.capacity();
  const std::size_t n = std::size_t(lf * cap);
  std::vector<std::uint32_t> k(n), m(n), v(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = key_of(std::uint32_t(i)), m[i] = key_of(std::uint32_t(i + n)), v[i] = std::uint32_t(i);
  auto dk = buffer<std::uint32_t>::from_host(k, execution::gpu());
  auto dm = buffer<std::uint32_t>::from_host(m, execution::gpu());
  auto dv = buffer<std::uint32_t>::from_host(v, execution::gpu());
  buffer<std::uint32_t> out(n, execution::gpu());
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ins;
  std::size_t final_cap = 0, rehashes = 0;
  for (int r = 0; r < 4; ++r) {
    map_t map(std::size_t(slots * 0.95), cfg, execution::gpu());
    cudaEventRecord(a); map.insert(dk.data(), dv.data(), n); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (r) ins.push_back(ms);
    final_cap = map.capacity(); rehashes = map.rehash_count();
    if (r == 3) {
      auto timef = [&](const std::uint32_t* q) { std::vector<float> t; for (int j = 0; j < 6; ++j) { cudaEventRecord(a); map.find(q, n, out.data()); cudaEventRecord(b); cudaEventSynchronize(b); float x; cudaEventElapsedTime(&x, a, b); if (j) t.push_back(x); } std::sort(t.begin(), t.end()); return t[t.size() / 2]; };
      const float fh = timef(dk.data());
      auto o = out.to_vector(); std::size_t bad = 0; for (std::size_t i = 0; i < n; ++i) bad += o[i] != v[i];
      const float fm = timef(dm.data());
      buffer<bool> fo(n, execution::gpu()); map.contains(dm.data(), n, fo.data()); cudaDeviceSynchronize();
      std::unique_ptr<bool[]> fov(new bool[n]); cudaMemcpy(fov.get(), fo.data(), n, cudaMemcpyDeviceToHost); std::size_t false_hits = 0; for (std::size_t i = 0; i < n; ++i) false_hits += fov[i] ? 1 : 0;
      std::sort(ins.begin(), ins.end());
      const float im = ins[ins.size() / 2];
      const char* ops[3] = {"insert", "find_hit", "find_miss"};
      const float msv[3] = {im, fh, fm};
      for (int q = 0; q < 3; ++q)
        printf("{\"experiment\":\"E4-h64-map\",\"map\":\"hopscotch_map<u32,u32,%d,hopscotch_buckets>\",\"commit\":\"%s\",\"tile\":%d,\"load_factor\":%.2f,\"capacity\":%zu,\"keys\":%zu,\"operation\":\"%s\",\"median_ms\":%.4f,\"gops\":%.3f,\"final_capacity\":%zu,\"rehash_count\":%zu,\"grew\":%s,\"size\":%zu,\"verified\":%s}\n",
               T, commit, T, lf, cap, n, ops[q], msv[q], n / (msv[q] * 1e6), final_cap, rehashes, final_cap != cap ? "true" : "false", map.size(), (q == 1 ? bad == 0 : (q == 0 ? map.size() == n : false_hits == 0)) ? "true" : "false");
      fflush(stdout);
    }
  }
}
int main(int argc, char** argv) {
  const char* commit = argc > 1 ? argv[1] : "unknown";
  for (double lf : {0.5, 0.8, 0.9, 0.95}) { run<1>(lf, commit); run<4>(lf, commit); }
  return 0;
}
