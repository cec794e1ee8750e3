// experiment (session 23): the thread-per-operation launch of the one-lane open-addressing kernels
// (linear_map / quadratic_map <u32, u32, 1>), block size and operations per thread as compile-time
// knobs of an experimental copy of core/launcher.hpp (WARPKV_EXP_TPI_BLOCK, WARPKV_EXP_IPT: the
// grid shrinks by IPT and each thread strides over IPT operations). Inserts (no statuses) and
// finds (hits, values out) at C = 2^26, LF 0.5 and 0.8; medians of 7 CUDA-event timings after 2.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "warpkv/open_addressing/linear_map.hpp"
#include "warpkv/open_addressing/quadratic_map.hpp"
static unsigned fmix32(unsigned h){h^=h>>16;h*=0x85ebca6bu;h^=h>>13;h*=0xc2b2ae35u;h^=h>>16;return h;}
#ifndef WARPKV_EXP_TPI_BLOCK
#define WARPKV_EXP_TPI_BLOCK 256
#endif
#ifndef WARPKV_EXP_IPT
#define WARPKV_EXP_IPT 1
#endif
template <class Map>
void run(const char* name, std::size_t C, double lf, const unsigned* dk, const unsigned* dv, unsigned* dout, std::size_t n, const char* tag) {
  warpkv::open_addressing_config cfg; cfg.max_load_factor = 1.0;
  Map map(C, cfg);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ins, fnd;
  for (int r = 0; r < 9; ++r) {
    map.clear(); cudaDeviceSynchronize();
    cudaEventRecord(a, map.exec().stream);
    map.insert(dk, dv, n, nullptr);
    cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
    float t; cudaEventElapsedTime(&t, a, b); if (r >= 2) ins.push_back(t);
    cudaEventRecord(a, map.exec().stream);
    map.find(dk, n, dout);
    cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
    cudaEventElapsedTime(&t, a, b); if (r >= 2) fnd.push_back(t);
  }
  std::vector<unsigned> out(n);
  cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += out[i] != static_cast<unsigned>(i) && fmix32(static_cast<unsigned>(i) + 12345u) < 0xfffffffeu;
  std::sort(ins.begin(), ins.end()); std::sort(fnd.begin(), fnd.end());
  const float mi = ins[ins.size()/2], mf = fnd[fnd.size()/2];
  printf("{\"experiment\":\"tpi-launch\",\"tag\":\"%s\",\"block\":%d,\"ops_per_thread\":%d,\"map\":\"%s\",\"capacity\":%zu,\"load_factor\":%.2f,\"n\":%zu,\"size\":%zu,\"wrong_values\":%zu,"
         "\"insert_ms\":%.4f,\"insert_gops\":%.4f,\"insert_min_ms\":%.4f,\"insert_max_ms\":%.4f,\"find_ms\":%.4f,\"find_gops\":%.4f}\n",
         tag, WARPKV_EXP_TPI_BLOCK, WARPKV_EXP_IPT, name, C, lf, n, map.size(), bad, mi, n / (mi * 1e6), ins.front(), ins.back(), mf, n / (mf * 1e6));
  fflush(stdout);
}
int main(int argc, char** argv) {
  const std::size_t C = std::size_t{1} << (argc > 1 ? atoi(argv[1]) : 26);
  const char* tag = argc > 2 ? argv[2] : "x";
  for (double lf : {0.5, 0.8}) {
    const std::size_t n = static_cast<std::size_t>(lf * C);
    std::vector<unsigned> k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) { k[i] = fmix32(static_cast<unsigned>(i) + 12345u); if (k[i] >= 0xfffffffeu) k[i] = 7; v[i] = (unsigned)i; }
    unsigned *dk, *dv, *dout; cudaMalloc(&dk, n*4); cudaMalloc(&dv, n*4); cudaMalloc(&dout, n*4);
    cudaMemcpy(dk, k.data(), n*4, cudaMemcpyHostToDevice); cudaMemcpy(dv, v.data(), n*4, cudaMemcpyHostToDevice);
    run<warpkv::linear_map<unsigned, unsigned, 1>>("linear", C, lf, dk, dv, dout, n, tag);
    run<warpkv::quadratic_map<unsigned, unsigned, 1>>("quadratic", C, lf, dk, dv, dout, n, tag);
    cudaFree(dk); cudaFree(dv); cudaFree(dout);
  }
}
