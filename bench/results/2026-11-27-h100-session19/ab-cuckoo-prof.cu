// Throwaway profile driver (session 19, call F): cuckoo_map<u32, u32, 1> built with
// exp-call-f.patch (-DWARPKV_EXP_PROF: clock64 sums inside write_evicting), one insert batch at
// LF 0.95 / 0.9, C = 2^27; prints the sums per handed-back attempt.
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
  unsigned *k, *v;
  cudaMalloc(&k, n * 4); cudaMalloc(&v, n * 4);
  gen<<<1024, 256>>>(k, v, n, 0x1234567u);
  cudaDeviceSynchronize();
  for (int r = 0; r < 2; ++r) {
    Map map(static_cast<size_t>(cap * 0.9), cfg);
    static unsigned long long zero[256][8];
    cudaMemcpyToSymbol(warpkv_prof, zero, sizeof(zero));
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a); const auto s = map.insert(k, v, n); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    static unsigned long long h[256][8];
    cudaMemcpyFromSymbol(h, warpkv_prof, sizeof(h));
    unsigned long long t[8] = {};
    for (int i = 0; i < 256; ++i) for (int j = 0; j < 8; ++j) t[j] += h[i][j];
    const double att = t[5] ? double(t[5]) : 1.0;
    std::printf("{\"variant\":\"%s\",\"map\":\"%s\",\"lf\":%.2f,\"run\":%d,\"insert_ms\":%.3f,\"inserted\":%llu,\"size\":%zu,"
                "\"attempts\":%llu,\"chain_moves_per_attempt\":%.3f,\"lock_backoffs\":%llu,"
                "\"cycles_per_attempt\":{\"plan\":%.0f,\"far_moves\":%.0f,\"lock\":%.0f,\"locked_work\":%.0f,\"unlock\":%.0f}}\n",
                VARIANT, name, lf, r, ms, (unsigned long long)s[warpkv::status::inserted], map.size(), t[5], t[6] / att, t[7],
                t[0] / att, t[1] / att, t[2] / att, t[3] / att, t[4] / att);
  }
  cudaFree(k); cudaFree(v);
}
int main() {
  warpkv::cuckoo_config cc; cc.max_load_factor = 0.97;
  const size_t cap = size_t(1) << 27;
  for (double lf : {0.95, 0.9}) run<warpkv::cuckoo_map<unsigned, unsigned, 1>>("cuckoo T=1", cc, lf, cap);
}
