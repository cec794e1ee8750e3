// experiment (session 23): the thread-per-operation launch shape (block x ops per thread, knobs of
// an experimental copy of core/launcher.hpp) for the other one-lane thread_per_op maps: cuckoo_map
// <u32,u32,1> and hopscotch_map<u32,u32,1,hopscotch_buckets> (H64). Inserts (no statuses) and
// finds (hits) at capacity ~2^27; medians of 5 CUDA-event timings after 1.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "warpkv/cuckoo/cuckoo_map.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"
static unsigned fmix32(unsigned h){h^=h>>16;h*=0x85ebca6bu;h^=h>>13;h*=0xc2b2ae35u;h^=h>>16;return h;}
#ifndef WARPKV_EXP_TPI_BLOCK
#define WARPKV_EXP_TPI_BLOCK 256
#endif
#ifndef WARPKV_EXP_IPT
#define WARPKV_EXP_IPT 1
#endif
template <class Map, class Cfg>
void run(const char* name, Cfg cfg, std::size_t C, const std::vector<double>& lfs, const char* tag) {
  Map probe(static_cast<std::size_t>(C * cfg.max_load_factor), cfg);
  const std::size_t cap = probe.capacity();
  for (double lf : lfs) {
    const std::size_t n = static_cast<std::size_t>(lf * cap);
    std::vector<unsigned> k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) { k[i] = fmix32(static_cast<unsigned>(i) + 12345u); if (k[i] >= 0xfffffffeu) k[i] = 7; v[i] = (unsigned)i + 1; }
    unsigned *dk, *dv, *dout; cudaMalloc(&dk, n*4); cudaMalloc(&dv, n*4); cudaMalloc(&dout, n*4);
    cudaMemcpy(dk, k.data(), n*4, cudaMemcpyHostToDevice); cudaMemcpy(dv, v.data(), n*4, cudaMemcpyHostToDevice);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> ins, fnd;
    std::size_t size = 0, capafter = 0;
    for (int r = 0; r < 6; ++r) {
      Map map(static_cast<std::size_t>(C * cfg.max_load_factor), cfg);
      cudaDeviceSynchronize();
      cudaEventRecord(a, map.exec().stream);
      map.insert(dk, dv, n, nullptr);
      cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
      float t; cudaEventElapsedTime(&t, a, b); if (r >= 1) ins.push_back(t);
      cudaEventRecord(a, map.exec().stream);
      map.find(dk, n, dout);
      cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
      cudaEventElapsedTime(&t, a, b); if (r >= 1) fnd.push_back(t);
      size = map.size(); capafter = map.capacity();
    }
    std::vector<unsigned> out(n);
    cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += out[i] != static_cast<unsigned>(i) + 1 && fmix32(static_cast<unsigned>(i) + 12345u) < 0xfffffffeu;
    std::sort(ins.begin(), ins.end()); std::sort(fnd.begin(), fnd.end());
    const float mi = ins[ins.size()/2], mf = fnd[fnd.size()/2];
    printf("{\"experiment\":\"tpi-launch\",\"tag\":\"%s\",\"block\":%d,\"ops_per_thread\":%d,\"map\":\"%s\",\"capacity\":%zu,\"capacity_after\":%zu,\"load_factor\":%.2f,\"n\":%zu,\"size\":%zu,\"wrong_values\":%zu,"
           "\"insert_ms\":%.4f,\"insert_gops\":%.4f,\"find_ms\":%.4f,\"find_gops\":%.4f}\n",
           tag, WARPKV_EXP_TPI_BLOCK, WARPKV_EXP_IPT, name, cap, capafter, lf, n, size, bad, mi, n / (mi * 1e6), mf, n / (mf * 1e6));
    fflush(stdout);
    cudaFree(dk); cudaFree(dv); cudaFree(dout);
  }
}
int main(int argc, char** argv) {
  const std::size_t C = std::size_t{1} << (argc > 1 ? atoi(argv[1]) : 27);
  const char* tag = argc > 2 ? argv[2] : "x";
  warpkv::cuckoo_config cc; cc.max_load_factor = 0.97;
  run<warpkv::cuckoo_map<unsigned, unsigned, 1>>("cuckoo T=1", cc, C, {0.8, 0.9, 0.95}, tag);
  warpkv::hopscotch_config hc; hc.max_load_factor = 0.95;
  run<warpkv::hopscotch_map<unsigned, unsigned, 1, warpkv::hopscotch_buckets>>("H64 T=1", hc, C, {0.5, 0.8, 0.9}, tag);
}
