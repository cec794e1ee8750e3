// Throwaway E2 experiment (issue 24): find throughput of a bucketized hopscotch layout ("H64": a
// 64-byte bucket = 8-byte header + 7 packed u32 pairs) on a table built on the host, against the
// one-request ceiling. Not warpkv code; prints JSON lines.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
constexpr std::uint32_t EMPTY = 0xffffffffu;
constexpr int D = 16;  // hop bitmap over this bucket and the next 15
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) { x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x; }
__host__ __device__ inline std::uint32_t home_of(std::uint32_t k, std::uint32_t mask) { return mix32(k ^ 0x9e3779b9u) & mask; }
__host__ __device__ inline std::uint32_t digest_bit(std::uint32_t k) { return 1u << (mix32(k ^ 0x85ebca6bu) >> 28); }
// header: bits 0-15 hop bitmap (bit j: bucket h+j holds a key homed at h, j >= 1), bits 16-31 digest of those keys
struct alignas(64) bucket { std::uint64_t w[8]; };
__host__ __device__ inline std::uint64_t pack(std::uint32_t k, std::uint32_t v) { return (std::uint64_t(v) << 32) | k; }

template <int T>
__global__ void __launch_bounds__(256) find_kernel(const bucket* __restrict__ t, std::uint32_t mask, const std::uint32_t* __restrict__ keys,
                                                   std::uint32_t* __restrict__ out, std::size_t n, unsigned long long* found) {
  const std::size_t gt = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t op = gt / T;
  const unsigned lane = threadIdx.x % T;
  const unsigned wl = threadIdx.x % 32;
  const unsigned tmask = (T == 32 ? 0xffffffffu : ((1u << T) - 1u)) << (wl / T * T);
  const bool live = op < n;
  const std::uint32_t k = live ? keys[op] : EMPTY;
  std::uint32_t res = EMPTY;
  bool hit = false;
  if (live) {
    std::uint32_t h = home_of(k, mask);
    // home bucket
    std::uint64_t hdr = 0;
    auto scan = [&](std::uint32_t b, bool want_hdr) -> bool {
      if constexpr (T == 4) {
        const ulonglong2 p = reinterpret_cast<const ulonglong2*>(&t[b])[lane];
        const bool m0 = lane != 0 && std::uint32_t(p.x) == k, m1 = std::uint32_t(p.y) == k;
        const unsigned hits = __ballot_sync(tmask, m0 || m1);
        if (want_hdr) hdr = __shfl_sync(tmask, p.x, wl / T * T);
        if (hits) {
          const unsigned src = __ffs(hits) - 1;
          const std::uint32_t v = m0 ? std::uint32_t(p.x >> 32) : std::uint32_t(p.y >> 32);
          res = __shfl_sync(tmask, v, src);
          return true;
        }
        return false;
      } else if constexpr (T == 8) {
        const std::uint64_t p = t[b].w[lane];
        const bool m = lane != 0 && std::uint32_t(p) == k;
        const unsigned hits = __ballot_sync(tmask, m);
        if (want_hdr) hdr = __shfl_sync(tmask, p, wl / T * T);
        if (hits) { res = __shfl_sync(tmask, std::uint32_t(p >> 32), __ffs(hits) - 1); return true; }
        return false;
      } else {  // T == 1: four 16-byte loads
        const ulonglong2* q = reinterpret_cast<const ulonglong2*>(&t[b]);
        const ulonglong2 a = q[0], c = q[1], d = q[2], e = q[3];
        if (want_hdr) hdr = a.x;
        const std::uint64_t s[7] = {a.y, c.x, c.y, d.x, d.y, e.x, e.y};
#pragma unroll
        for (int i = 0; i < 7; ++i) if (std::uint32_t(s[i]) == k) { res = std::uint32_t(s[i] >> 32); return true; }
        return false;
      }
    };
    hit = scan(h, true);
    if (!hit) {
      std::uint32_t hop = std::uint32_t(hdr) & 0xfffeu;
      if (hop != 0 && (std::uint32_t(hdr >> 16) & digest_bit(k))) {
        while (hop) {
          const int j = __ffs(hop) - 1;
          hop &= hop - 1;
          if (scan((h + j) & mask, false)) { hit = true; break; }
        }
      }
    }
  }
  if (live && lane == 0) out[op] = hit ? res : EMPTY;
  if (found != nullptr && (T == 1 || lane == 0)) {
    const unsigned full = __activemask();
    const unsigned c = __popc(__ballot_sync(full, hit && (T == 1 || lane == 0)));
    if ((threadIdx.x % 32) == __ffs(full) - 1 && c) atomicAdd(found, c);
  }
}

// reference: a one-request ceiling: each op reads the 64-byte bucket at its home and nothing else
template <int T>
__global__ void __launch_bounds__(256) ceiling_kernel(const bucket* __restrict__ t, std::uint32_t mask, const std::uint32_t* __restrict__ keys,
                                                      std::uint32_t* __restrict__ out, std::size_t n) {
  const std::size_t gt = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t op = gt / T;
  const unsigned lane = threadIdx.x % T;
  if (op >= n) return;
  const std::uint32_t k = keys[op];
  const ulonglong2 p = reinterpret_cast<const ulonglong2*>(&t[home_of(k, mask)])[lane];
  if ((p.x ^ p.y) == 0x1234) out[op] = 1;  // never true in practice; keeps the load
}

int main(int argc, char** argv) {
  const int log2b = argc > 1 ? atoi(argv[1]) : 23;
  const std::uint32_t nb = 1u << log2b, mask = nb - 1;
  const std::size_t slots = std::size_t(nb) * 7;
  std::vector<bucket> tab(nb);
  for (auto& b : tab) for (int i = 0; i < 8; ++i) b.w[i] = i == 0 ? 0 : pack(EMPTY, 0);
  std::vector<std::uint8_t> used(nb, 0);
  bucket* dt; CK(cudaMalloc(&dt, sizeof(bucket) * nb));
  std::uint32_t *dk, *dout; unsigned long long* dfound;
  const std::size_t maxn = slots;
  CK(cudaMalloc(&dk, maxn * 4)); CK(cudaMalloc(&dout, maxn * 4)); CK(cudaMalloc(&dfound, 8));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::size_t placed_total = 0, next = 0, failed = 0, in_home = 0;
  std::vector<std::uint32_t> placed;
  placed.reserve(slots);
  for (double lf : {0.5, 0.8, 0.9, 0.95}) {
    const std::size_t target = std::size_t(lf * slots);
    while (placed.size() + failed < target) {
      const std::uint32_t k = mix32(std::uint32_t(next++) * 2654435761u + 7u);  // bijective: unique keys
      if (k == EMPTY) continue;
      const std::uint32_t h = home_of(k, mask);
      bool ok = false;
      for (int j = 0; j < D && !ok; ++j) {
        const std::uint32_t b = (h + j) & mask;
        if (used[b] < 7) {
          tab[b].w[1 + used[b]++] = pack(k, k ^ 0xabcdu);
          if (j == 0) ++in_home;
          else tab[h].w[0] |= (1ull << j) | (std::uint64_t(digest_bit(k)) << 16);
          ok = true;
        }
      }
      if (ok) placed.push_back(k); else ++failed;
    }
    CK(cudaMemcpy(dt, tab.data(), sizeof(bucket) * nb, cudaMemcpyHostToDevice));
    // hits: the placed keys in random order; misses: fresh keys
    std::vector<std::uint32_t> hits(placed);
    std::shuffle(hits.begin(), hits.end(), std::mt19937_64(1));
    std::vector<std::uint32_t> miss(hits.size());
    for (std::size_t i = 0; i < miss.size(); ++i) { std::uint32_t k; do k = mix32(std::uint32_t(next + 0x40000000u + i) * 2654435761u + 7u); while (k == EMPTY); miss[i] = k; }
    // (miss keys come from indices far beyond those inserted: bijective mix, so never a placed key)
    const std::size_t n = hits.size();
    for (int which = 0; which < 2; ++which) {
      CK(cudaMemcpy(dk, which == 0 ? hits.data() : miss.data(), n * 4, cudaMemcpyHostToDevice));
      auto time = [&](auto launch) {
        std::vector<float> ms;
        for (int r = 0; r < 7; ++r) { CK(cudaMemset(dfound, 0, 8)); cudaEventRecord(e0); launch(); cudaEventRecord(e1); CK(cudaEventSynchronize(e1)); float m; cudaEventElapsedTime(&m, e0, e1); if (r >= 2) ms.push_back(m); }
        CK(cudaGetLastError());
        std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
      };
      auto run = [&](const char* name, int T, auto launch, bool check) {
        const float m = time([&] { launch(nullptr); });
        CK(cudaMemset(dfound, 0, 8)); launch(dfound); CK(cudaDeviceSynchronize());
        unsigned long long f = 0; CK(cudaMemcpy(&f, dfound, 8, cudaMemcpyDeviceToHost));
        const bool ok = !check || f == (which == 0 ? n : 0);
        printf("{\"experiment\":\"E2-h64-find\",\"kernel\":\"%s\",\"tile\":%d,\"lf\":%.2f,\"op\":\"%s\",\"buckets\":%u,\"slots\":%zu,\"keys\":%zu,\"failed_inserts\":%zu,\"in_home\":%.4f,\"ms\":%.4f,\"gops\":%.3f,\"found\":%llu,\"verified\":%s}\n",
               name, T, lf, which == 0 ? "find_hit" : "find_miss", nb, slots, n, failed, double(in_home) / placed.size(), m, n / (m * 1e6), f, ok ? "true" : "false");
        fflush(stdout);
      };
      run("h64", 4, [&](unsigned long long* f) { find_kernel<4><<<(n * 4 + 255) / 256, 256>>>(dt, mask, dk, dout, n, f); }, true);
      run("h64", 8, [&](unsigned long long* f) { find_kernel<8><<<(n * 8 + 255) / 256, 256>>>(dt, mask, dk, dout, n, f); }, true);
      run("h64", 1, [&](unsigned long long* f) { find_kernel<1><<<(n + 255) / 256, 256>>>(dt, mask, dk, dout, n, f); }, true);
      run("one-read-ceiling", 4, [&](unsigned long long*) { ceiling_kernel<4><<<(n * 4 + 255) / 256, 256>>>(dt, mask, dk, dout, n); }, false);
    }
  }
  return 0;
}
