// Throwaway A/B driver (session 19, call C): cuckoo_map<u32, u32, 1>, built with exp-call-c.patch's
// -DWARPKV_EXP_SLOW_BUDGET=64 / 48 / 40 (the complete insert's register budget), inserts of
// floor(lf*C) unique u32 keys then finds, median of 5 after a warm-up.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "warpkv/cuckoo/cuckoo_map.hpp"
#ifndef VARIANT
#define VARIANT "?"
#endif
__host__ __device__ inline unsigned mix32(unsigned h) { h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16; return h; }
__global__ void gen(unsigned* k, unsigned* v, size_t n, unsigned salt) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned x = mix32(static_cast<unsigned>(i) ^ salt);
    if (x >= 0xfffffffeu) x = 0x7fffffffu - static_cast<unsigned>(i & 0xff);
    k[i] = x; v[i] = static_cast<unsigned>(i);
  }
}
template <class Map, class Cfg>
void run(const char* name, Cfg cfg, double lf, size_t cap) {
  const size_t n = static_cast<size_t>(lf * cap);
  unsigned *k, *v, *o, *m;
  cudaMalloc(&k, n * 4); cudaMalloc(&v, n * 4); cudaMalloc(&o, n * 4); cudaMalloc(&m, n * 4);
  gen<<<1024, 256>>>(k, v, n, 0x1234567u);
  gen<<<1024, 256>>>(m, o, n, 0x89abcdefu);
  cudaDeviceSynchronize();
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ti, tf, tm;
  bool ok = true;
  for (int r = 0; r < 6; ++r) {
    Map map(static_cast<size_t>(cap * 0.9), cfg);
    if (map.capacity() != cap) { std::printf("capacity %zu != %zu\n", map.capacity(), cap); return; }
    cudaDeviceSynchronize();
    cudaEventRecord(a); map.insert(k, v, n); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (r) ti.push_back(ms);
    cudaEventRecord(a); map.find(k, n, o); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); if (r) tf.push_back(ms);
    if (r == 5) {  // every value found is the key's
      std::vector<unsigned> hv(n);
      cudaMemcpy(hv.data(), o, n * 4, cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < n; ++i) if (hv[i] != static_cast<unsigned>(i)) { ok = false; break; }
    }
    cudaEventRecord(a); map.find(m, n, o); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); if (r) tm.push_back(ms);
    if (r == 5 && map.size() != n) { std::printf("SIZE MISMATCH %zu %zu\n", map.size(), n); ok = false; }
  }
  auto med = [](std::vector<float> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
  std::printf("{\"variant\":\"%s\",\"map\":\"%s\",\"lf\":%.2f,\"capacity\":%zu,\"insert_gops\":%.3f,\"hit_gops\":%.3f,\"miss_gops\":%.3f,\"verified\":%s}\n",
              VARIANT, name, lf, cap, n / med(ti) / 1e6, n / med(tf) / 1e6, n / med(tm) / 1e6, ok ? "true" : "false");
  cudaFree(k); cudaFree(v); cudaFree(o); cudaFree(m);
}
int main() {
  warpkv::cuckoo_config cc; cc.max_load_factor = 0.97;
  const size_t cap = size_t(1) << 27;
  for (double lf : {0.95, 0.9}) run<warpkv::cuckoo_map<unsigned, unsigned, 1>>("cuckoo T=1", cc, lf, cap);
}
