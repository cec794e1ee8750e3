// experiment (session 26: ab-h64.cu of session 24 with a miss find: n keys never inserted, fmix32 of
// n + i + 12345, distinct from the inserted ones since fmix32 is a bijection)
// experiment (session 24): hopscotch_map<u32,u32,1,hopscotch_buckets> (H64) inserts and finds,
// 2^24 buckets (7 x 2^24 slots: C = 2^27 slots' bytes), LF 0.5-0.95, one binary per header tree
// (HEAD, V1 weak first home read, V2 + relaxed lock and weak neighbour reads). Medians of 5
// CUDA-event timings after 1; every value checked.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "warpkv/hopscotch/hopscotch_map.hpp"
static unsigned fmix32(unsigned h){h^=h>>16;h*=0x85ebca6bu;h^=h>>13;h*=0xc2b2ae35u;h^=h>>16;return h;}
int main(int argc, char** argv) {
  const char* tag = argc > 1 ? argv[1] : "x";
  using Map = warpkv::hopscotch_map<unsigned, unsigned, 1, warpkv::hopscotch_buckets>;
  warpkv::hopscotch_config cfg; cfg.max_load_factor = std::getenv("H64_MAX_LF") ? std::strtod(std::getenv("H64_MAX_LF"), nullptr) : 0.97;
  const std::size_t target = std::size_t{7} << 24;
  const std::size_t hint = static_cast<std::size_t>((cfg.max_load_factor - 0.01) * static_cast<double>(target));
  std::vector<double> lfs{0.5, 0.8, 0.9, 0.95};
  if (argc > 2) { lfs.clear(); for (char* p = argv[2]; *p;) { lfs.push_back(std::strtod(p, &p)); if (*p == ',') ++p; } }
  const int reps = argc > 3 ? std::atoi(argv[3]) : 6;
  for (double lf : lfs) {
    Map probe(hint, cfg);
    const std::size_t cap = probe.capacity();
    const std::size_t n = static_cast<std::size_t>(lf * cap);
    std::vector<unsigned> k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) { k[i] = fmix32(static_cast<unsigned>(i) + 12345u); if (k[i] >= 0xfffffffcu) k[i] = 7; v[i] = (unsigned)i + 1; }
    unsigned *dk, *dv, *dout; cudaMalloc(&dk, n*4); cudaMalloc(&dv, n*4); cudaMalloc(&dout, n*4);
    cudaMemcpy(dk, k.data(), n*4, cudaMemcpyHostToDevice); cudaMemcpy(dv, v.data(), n*4, cudaMemcpyHostToDevice);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<unsigned> mk(n);
    for (std::size_t i = 0; i < n; ++i) { mk[i] = fmix32(static_cast<unsigned>(n + i) + 12345u); if (mk[i] >= 0xfffffffcu) mk[i] = fmix32(12345u - 1u); }
    unsigned* dmk; cudaMalloc(&dmk, n*4); cudaMemcpy(dmk, mk.data(), n*4, cudaMemcpyHostToDevice);
    std::vector<float> ins, fnd, mis;
    std::size_t size = 0, capafter = 0, stashed = 0;
    for (int r = 0; r < reps; ++r) {
      Map map(hint, cfg);
      cudaDeviceSynchronize();
      cudaEventRecord(a, map.exec().stream);
      map.insert(dk, dv, n, nullptr);
      cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
      float t; cudaEventElapsedTime(&t, a, b); if (r >= 1) ins.push_back(t);
      cudaEventRecord(a, map.exec().stream);
      map.find(dk, n, dout);
      cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
      cudaEventElapsedTime(&t, a, b); if (r >= 1) fnd.push_back(t);
      cudaEventRecord(a, map.exec().stream);
      map.find(dmk, n, dout);
      cudaEventRecord(b, map.exec().stream); cudaEventSynchronize(b);
      cudaEventElapsedTime(&t, a, b); if (r >= 1) mis.push_back(t);
      map.find(dk, n, dout);
      size = map.size(); capafter = map.capacity();
      if (r == reps - 1) stashed = map.stashed();
    }
    std::vector<unsigned> out(n);
    cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += out[i] != static_cast<unsigned>(i) + 1 && fmix32(static_cast<unsigned>(i) + 12345u) < 0xfffffffcu;
    std::sort(ins.begin(), ins.end()); std::sort(fnd.begin(), fnd.end()); std::sort(mis.begin(), mis.end());
    const float mi = ins[ins.size()/2], mf = fnd[fnd.size()/2], mm = mis[mis.size()/2];
    printf("{\"experiment\":\"h64-insert\",\"tag\":\"%s\",\"map\":\"H64 T=1\",\"capacity\":%zu,\"capacity_after\":%zu,\"load_factor\":%.2f,\"n\":%zu,\"size\":%zu,\"stashed\":%zu,\"wrong_values\":%zu,"
           "\"insert_ms\":%.4f,\"insert_gops\":%.4f,\"find_ms\":%.4f,\"find_gops\":%.4f,\"miss_ms\":%.4f,\"miss_gops\":%.4f}\n",
           tag, cap, capafter, lf, n, size, stashed, bad, mi, n / (mi * 1e6), mf, n / (mf * 1e6), mm, n / (mm * 1e6));
    fflush(stdout);
    cudaFree(dmk); cudaFree(dk); cudaFree(dv); cudaFree(dout);
  }
}
