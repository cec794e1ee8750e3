// experiment (session 22): linear_map<u32,u32,1> insert throughput vs resident blocks (dynamic smem cap)
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "warpkv/open_addressing/linear_map.hpp"
static unsigned fmix32(unsigned h){h^=h>>16;h*=0x85ebca6bu;h^=h>>13;h*=0xc2b2ae35u;h^=h>>16;return h;}
int main(int argc, char** argv) {
  const std::size_t C = std::size_t{1} << (argc > 1 ? atoi(argv[1]) : 26);
  const char* tag = argc > 2 ? argv[2] : "x";
  for (double lf : {0.5, 0.8}) {
    const std::size_t n = static_cast<std::size_t>(lf * C);
    std::vector<unsigned> k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) { k[i] = fmix32(static_cast<unsigned>(i) + 12345u); if (k[i] >= 0xfffffffeu) k[i] = 7; v[i] = (unsigned)i; }
    unsigned *dk, *dv; cudaMalloc(&dk, n*4); cudaMalloc(&dv, n*4);
    cudaMemcpy(dk, k.data(), n*4, cudaMemcpyHostToDevice); cudaMemcpy(dv, v.data(), n*4, cudaMemcpyHostToDevice);
    warpkv::open_addressing_config cfg; cfg.max_load_factor = 1.0;
    warpkv::linear_map<unsigned, unsigned, 1> map(C, cfg);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> ms;
    for (int r = 0; r < 7; ++r) {
      map.clear(); cudaDeviceSynchronize();
      cudaEventRecord(a, map.exec().stream);
      map.insert(dk, dv, n, nullptr);
      cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
      float t; cudaEventElapsedTime(&t, a, b); if (r >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    printf("{\"experiment\":\"occupancy-cap\",\"tag\":\"%s\",\"capacity\":%zu,\"load_factor\":%.2f,\"size\":%zu,\"capacity_after\":%zu,\"median_ms\":%.4f,\"gops\":%.4f}\n",
           tag, C, lf, map.size(), map.capacity(), ms[ms.size()/2], n / (ms[ms.size()/2] * 1e6));
    cudaFree(dk); cudaFree(dv);
  }
}
