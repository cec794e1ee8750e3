// experiment (session 26; session 27: tile 8 only unless AB_ALL_TILES, the bucket-version protocol's A/B): kv_cache<u64, 8, T> (optimistic_lru, value slab, no digests: the default
// design) at T = 1, 2, 4, 8 on warpkv-bench's `cache --hkv` workload (capacity 2^27, 32-byte values,
// 2^20-key batches; fill to the load, then find of present keys, get_or_set half present / half
// new, set of new keys), one binary per header tree. Medians of REPS CUDA-event timings after 1;
// every found value checked against the value its key was written with.
// AB_MAX_KICKS (environment): cache_config::max_kicks (default 5000). AB_VALUE_WORDS: value words
// (default 4 = 32 bytes, HKV's dim 8; 16 = 128 bytes, its dim 32).
// usage: ab-cache TAG [TILES=8; 1,2,4 with AB_ALL_TILES; 16 (W 16, T 8), 17 (W 16, T 16) with AB_WIDE] [LOADS=0.5,0.75,1.0] [REPS=5] [CAPACITY_LOG2=27]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "warpkv/cache/kv_cache.hpp"
using u64 = std::uint64_t;
static u64 fmix(u64 k) { k ^= k >> 33; k *= 0xff51afd7ed558ccdull; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ull; k ^= k >> 33; return k; }
static u64 key_of(u64 i) { u64 k = fmix(i) | 1; return k == ~0ull ? 3 : k; }
static u64 word_of(u64 k, int j) { return fmix(k + 0x9e3779b97f4a7c15ull * (j + 1)); }
static std::vector<double> parse(const char* s) { std::vector<double> v; for (const char* p = s; *p;) { char* e; v.push_back(std::strtod(p, &e)); p = e; if (*p == ',') ++p; } return v; }

template <class C> constexpr int ab_choices() { if constexpr (requires { C::ref_type::choices; }) return C::ref_type::choices; else return 2; }
#ifndef AB_DEFAULT_ONLY
using ob = warpkv::cache_designs::one_bucket_lru;
using obp = warpkv::cache_design<warpkv::detail::optimistic_slots, warpkv::detail::lru_eviction, warpkv::detail::value_slab,
                                 warpkv::detail::plain_keys, warpkv::detail::one_bucket>;
#endif
template <int T, int W = 8, class D = warpkv::default_cache_design>
void run(const char* tag, const std::vector<double>& loads, int reps, int cap_log2) {
  using cache_t = warpkv::kv_cache<u64, W, T, D>;
  warpkv::cache_config cfg;
  cfg.capacity = std::size_t{1} << cap_log2;
  if (const char* mk = std::getenv("AB_MAX_KICKS")) cfg.max_kicks = (std::uint32_t)std::atoi(mk);
  const char* vws = std::getenv("AB_VALUE_WORDS");  // value words (HKV's dim / 2): 4 (dim 8) or 16 (dim 32)
  const std::size_t vw = vws != nullptr ? (std::size_t)std::atoi(vws) : 4;
  cfg.value_bytes = 8 * vw;
  cache_t cache(cfg);
  const cudaStream_t st = cache.exec().stream;
  const std::size_t batch = std::size_t{1} << 20;
  u64 *dk, *din, *dout; warpkv::status* dst;
  cudaMalloc(&dk, batch * 8); cudaMalloc(&din, batch * 8 * vw); cudaMalloc(&dout, batch * 8 * vw); cudaMalloc(&dst, batch);
  std::vector<u64> hk(batch), hin(batch * vw), hout(batch * vw);
  auto upload = [&](std::size_t n, u64 first) {
    for (std::size_t i = 0; i < n; ++i) { hk[i] = key_of(first + i); for (std::size_t j = 0; j < vw; ++j) hin[i * vw + j] = word_of(hk[i], (int)j); }
    cudaMemcpy(dk, hk.data(), n * 8, cudaMemcpyHostToDevice); cudaMemcpy(din, hin.data(), n * 8 * vw, cudaMemcpyHostToDevice);
  };
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto timed = [&](auto&& f) { cudaEventRecord(a, st); f(); cudaEventRecord(b, st); cudaEventSynchronize(b); float t; cudaEventElapsedTime(&t, a, b); return (double)t; };
  auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  u64 next = 1;
  for (double load : loads) {
    const u64 want = (u64)(load * (double)cache.capacity());
    while (next - 1 < want) { std::size_t n = (std::size_t)std::min<u64>(batch, want - (next - 1)); upload(n, next); cache.execute_resident(n, nullptr, warpkv::cache_op::set, dk, din, nullptr, dst); next += n; }
    const std::size_t n = batch;
    auto emit = [&](const char* op, std::vector<double>& ms, u64 count, u64 wrong) {
      const double m = median(ms);
      printf("{\"experiment\":\"cache-tile\",\"tag\":\"%s\",\"tile\":%d,\"bucket_width\":%d,\"choices\":%d,\"max_kicks\":%u,\"value_bytes\":%zu,\"capacity\":%zu,\"load\":%.2f,\"operation\":\"%s\",\"batch\":%zu,\"size\":%zu,\"count\":%llu,\"wrong_values\":%llu,\"ms\":%.4f,\"gkvs\":%.4f}\n",
             tag, T, W, ab_choices<cache_t>(), cfg.max_kicks, (std::size_t)cfg.value_bytes, cache.capacity(), load, op, n, cache.size(), (unsigned long long)count, (unsigned long long)wrong, m, n / (m * 1e6));
      fflush(stdout);
    };
    std::vector<double> ms; u64 found = 0, wrong = 0;
    for (int r = 0; r < 1 + reps; ++r) {  // find: present keys
      const u64 first = 1 + ((u64)r * 7919) % std::max<u64>(1, next - 1 - n);
      upload(n, first);
      warpkv::batch_summary s;
      const double t = timed([&] { s = cache.execute_resident(n, nullptr, warpkv::cache_op::get, dk, nullptr, dout, dst); });
      if (r >= 1) { ms.push_back(t); found += s[warpkv::status::found]; }
      if (r == reps) {
        std::vector<warpkv::status> hs(n);
        cudaMemcpy(hs.data(), dst, n, cudaMemcpyDeviceToHost); cudaMemcpy(hout.data(), dout, n * 8 * vw, cudaMemcpyDeviceToHost);
        for (std::size_t i = 0; i < n; ++i) if (hs[i] == warpkv::status::found) for (std::size_t j = 0; j < vw; ++j) wrong += hout[i * vw + j] != hin[i * vw + j];
      }
    }
    emit("find", ms, found, wrong);
    ms.clear(); found = 0; wrong = 0;
    for (int r = 0; r < 1 + reps; ++r) {  // get_or_set: half present, half new
      upload(n, next - n / 2); next += n / 2;
      warpkv::batch_summary s;
      const double t = timed([&] { s = cache.execute_resident(n, nullptr, warpkv::cache_op::get_or_set, dk, din, dout, dst); });
      if (r >= 1) { ms.push_back(t); found += s[warpkv::status::found]; }
      if (r == reps) {
        cudaMemcpy(hout.data(), dout, n * 8 * vw, cudaMemcpyDeviceToHost);
        for (std::size_t i = 0; i < n * vw; ++i) wrong += hout[i] != hin[i];
      }
    }
    emit("get_or_set", ms, found, wrong);
    ms.clear(); found = 0;
    for (int r = 0; r < 1 + reps; ++r) {  // set of new keys
      upload(n, next); next += n;
      warpkv::batch_summary s;
      const double t = timed([&] { s = cache.execute_resident(n, nullptr, warpkv::cache_op::set, dk, din, nullptr, dst); });
      if (r >= 1) { ms.push_back(t); found += s[warpkv::status::inserted]; }
    }
    emit(load >= 1.0 ? "insert_and_evict" : "insert_or_assign", ms, found, 0);
  }
  cudaFree(dk); cudaFree(din); cudaFree(dout); cudaFree(dst);
}

int main(int argc, char** argv) {
  const char* tag = argc > 1 ? argv[1] : "x";
  const std::vector<double> tiles = parse(argc > 2 ? argv[2] : "8");
  const std::vector<double> loads = parse(argc > 3 ? argv[3] : "0.5,0.75,1.0");
  const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
  const int cap = argc > 5 ? std::atoi(argv[5]) : 27;
  for (double t : tiles) {
    switch ((int)t) {
#ifdef AB_ALL_TILES
      case 1: run<1>(tag, loads, reps, cap); break;
      case 2: run<2>(tag, loads, reps, cap); break;
      case 4: run<4>(tag, loads, reps, cap); break;
#endif
      case 8: run<8>(tag, loads, reps, cap); break;
#ifdef AB_WIDE
      case 16: run<8, 16>(tag, loads, reps, cap); break;   // W = 16 at tile 8
      case 17: run<16, 16>(tag, loads, reps, cap); break;  // W = 16 at tile 16
#endif
#ifndef AB_DEFAULT_ONLY
      case 64: run<8, 64, ob>(tag, loads, reps, cap); break;   // one bucket of 64 at tile 8 (reads at 4)
      case 32: run<4, 32, ob>(tag, loads, reps, cap); break;   // one bucket of 32 at tile 4
      case 33: run<8, 32, ob>(tag, loads, reps, cap); break;   // one bucket of 32 at tile 8 (reads at 4)
      case 16: run<4, 16, obp>(tag, loads, reps, cap); break;  // one bucket of 16 at tile 4, no digests
      case 34: run<4, 32, obp>(tag, loads, reps, cap); break;  // one bucket of 32 at tile 4, no digests
#endif
      default: fprintf(stderr, "tile %g: 1, 2, 4 or 8 (AB_WIDE: 16 = W 16 at tile 8, 17 = W 16 at tile 16)\n", t); return 2;
    }
  }
}
