// experiment (session 23): does a thread that runs two or four inserts at once (both inputs, both
// first windows, both CASes in flight before either result is used) beat a thread per insert?
// Standalone linear probing over packed 8-byte (key, value) words, 4-slot aligned windows, weak
// (L1-cached) 16-byte reads, one relaxed CAS per insert: the same protocol and probe order as
// linear_map<u32, u32, 1>'s fast insert. warpkv's own insert runs in the same process as the anchor.
// Variants: ops/thread 1 (the control), 2 and 4 interleaved, 2 sequential (block churn only).
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#include "warpkv/open_addressing/linear_map.hpp"

using u32 = std::uint32_t;
using u64 = std::uint64_t;
static constexpr u32 kEmpty = 0xffffffffu;

__host__ __device__ inline u32 fmix(u32 h) {
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16; return h;
}
__device__ inline void ld2(const u64* p, u64& a, u64& b) {
  asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p));
}
__device__ inline u32 key_of(u64 w) { return static_cast<u32>(w); }

struct block_count { unsigned sum; unsigned warps_done; };

// The rest of one insert after a first look: walk on from window p (the first-look state given).
// Returns 1 inserted, 2 found, 0 full.
__device__ __forceinline__ int walk(u64* slots, size_t mask, u32 k, u64 mine, size_t p) {
  for (int win = 0; win < 64; ++win) {
    u64 w[4];
    ld2(slots + p, w[0], w[1]);
    ld2(slots + p + 2, w[2], w[3]);
    for (int s = 0; s < 4; ++s) {
      u64 cur = w[s];
      if (key_of(cur) == k) return 2;
      if (key_of(cur) == kEmpty) {
        const u64 old = atomicCAS(reinterpret_cast<unsigned long long*>(slots + p + s), cur, mine);
        if (old == cur) return 1;
        if (key_of(old) == k) return 2;
        // lost to another key: the slot is taken; go on in this window
      }
    }
    p = (p + 4) & mask;
  }
  return 0;
}

// OPS inserts per thread: op j of thread t of block b is index (b * OPS + j) * 256 + t.
template <int OPS, bool Interleave, int MinBlocks = 6>
__global__ void __launch_bounds__(256, MinBlocks) insert_k(const u32* keys, const u32* vals, size_t n, u64* slots, size_t mask,
                                                  unsigned long long* inserted) {
  __shared__ block_count bc;
  if (threadIdx.x == 0) { bc.sum = 0; bc.warps_done = 0; }
  __syncthreads();
  unsigned mine_count = 0;
  const size_t base = static_cast<size_t>(blockIdx.x) * OPS * 256 + threadIdx.x;
  if constexpr (!Interleave) {
#pragma unroll 1
    for (int j = 0; j < OPS; ++j) {
      const size_t i = base + static_cast<size_t>(j) * 256;
      if (i < n) {
        const u32 k = keys[i];
        const u64 m = (static_cast<u64>(vals[i]) << 32) | k;
        mine_count += walk(slots, mask, k, m, fmix(k) & mask & ~size_t{3}) == 1;
      }
    }
  } else {
    u32 k[OPS];
    u64 m[OPS];
    size_t p[OPS];
    bool live[OPS];
    u64 w0[OPS], w1[OPS];
#pragma unroll
    for (int j = 0; j < OPS; ++j) {
      const size_t i = base + static_cast<size_t>(j) * 256;
      live[j] = i < n;
      k[j] = live[j] ? keys[i] : 0u;
      m[j] = live[j] ? ((static_cast<u64>(vals[i]) << 32) | k[j]) : 0;
    }
#pragma unroll
    for (int j = 0; j < OPS; ++j) {
      p[j] = fmix(k[j]) & mask & ~size_t{3};
      if (live[j]) ld2(slots + p[j], w0[j], w1[j]);
    }
    // first candidate in the first half: slot s = 0 or 1 (-1: none there)
    int s[OPS];
    u64 expect[OPS], old[OPS];
#pragma unroll
    for (int j = 0; j < OPS; ++j) {
      s[j] = -1;
      if (live[j]) {
        if (key_of(w0[j]) == k[j] || key_of(w0[j]) == kEmpty) { s[j] = 0; expect[j] = w0[j]; }
        else if (key_of(w1[j]) == k[j] || key_of(w1[j]) == kEmpty) { s[j] = 1; expect[j] = w1[j]; }
      }
    }
    // both CASes issued before either result is looked at
#pragma unroll
    for (int j = 0; j < OPS; ++j)
      if (s[j] >= 0 && key_of(expect[j]) == kEmpty)
        old[j] = atomicCAS(reinterpret_cast<unsigned long long*>(slots + p[j] + s[j]), expect[j], m[j]);
#pragma unroll
    for (int j = 0; j < OPS; ++j) {
      if (!live[j]) continue;
      int r = 0;
      if (s[j] >= 0) {
        if (key_of(expect[j]) == k[j]) r = 2;
        else if (old[j] == expect[j]) r = 1;
        else if (key_of(old[j]) == k[j]) r = 2;
      }
      if (r == 0) r = walk(slots, mask, k[j], m[j], p[j]);  // rare: window's first half full, or a lost CAS
      mine_count += r == 1;
    }
  }
  const unsigned sum = __reduce_add_sync(0xffffffffu, mine_count);
  const bool leader = (threadIdx.x & 31u) == 0;
  unsigned last = 0;
  if (leader) {
    if (sum) atomicAdd_block(&bc.sum, sum);
    __threadfence_block();
    last = atomicAdd_block(&bc.warps_done, 1u) == blockDim.x / 32u - 1u;
  }
  if (leader && last) {
    __threadfence_block();
    atomicAdd(inserted, static_cast<unsigned long long>(atomicAdd_block(&bc.sum, 0u)));
  }
}

template <int OPS, bool Il, int MinB = 6>
static float run_variant(const char* name, const u32* dk, const u32* dv, size_t n, u64* slots, size_t C,
                         unsigned long long* dcount, double lf, const char* tag) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  unsigned long long got = 0;
  const unsigned grid = static_cast<unsigned>((n + 256ull * OPS - 1) / (256ull * OPS));
  for (int r = 0; r < 9; ++r) {
    cudaMemset(slots, 0xff, C * 8);
    cudaMemset(dcount, 0, 8);
    cudaDeviceSynchronize();
    cudaEventRecord(a);
    insert_k<OPS, Il, MinB><<<grid, 256>>>(dk, dv, n, slots, C - 1, dcount);
    cudaMemcpy(&got, dcount, 8, cudaMemcpyDeviceToHost);  // as a bulk insert reads its count
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    if (r >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const float med = ms[ms.size() / 2];
  printf("{\"experiment\":\"ops-per-thread\",\"tag\":\"%s\",\"variant\":\"%s\",\"capacity\":%zu,\"load_factor\":%.2f,"
         "\"size\":%zu,\"inserted\":%llu,\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,\"gops\":%.4f}\n",
         tag, name, C, lf, n, got, med, ms.front(), ms.back(), n / (med * 1e6));
  fflush(stdout);
  return med;
}

int main(int argc, char** argv) {
  const size_t C = size_t{1} << (argc > 1 ? atoi(argv[1]) : 26);
  const char* tag = argc > 2 ? argv[2] : "x";
  const int rounds = argc > 3 ? atoi(argv[3]) : 2;
  int dev = 0;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, dev);
  printf("{\"device\":\"%s\"}\n", prop.name);
  std::vector<double> lfs{0.5, 0.8};
  if (argc > 4) lfs = {atof(argv[4])};
  for (double lf : lfs) {
    const size_t n = static_cast<size_t>(lf * C);
    std::vector<u32> k(n), v(n);
    for (size_t i = 0; i < n; ++i) {
      k[i] = fmix(static_cast<u32>(i) + 12345u);
      if (k[i] >= 0xfffffffeu) k[i] = 7;
      v[i] = static_cast<u32>(i);
    }
    u32 *dk, *dv;
    u64* slots;
    unsigned long long* dcount;
    cudaMalloc(&dk, n * 4);
    cudaMalloc(&dv, n * 4);
    cudaMalloc(&slots, C * 8);
    cudaMalloc(&dcount, 8);
    cudaMemcpy(dk, k.data(), n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, v.data(), n * 4, cudaMemcpyHostToDevice);
    for (int round = 0; round < rounds; ++round) {
      run_variant<1, true>("1-op", dk, dv, n, slots, C, dcount, lf, tag);
      run_variant<2, true>("2-op-interleaved", dk, dv, n, slots, C, dcount, lf, tag);
      run_variant<2, false>("2-op-sequential", dk, dv, n, slots, C, dcount, lf, tag);
      run_variant<4, true>("4-op-interleaved", dk, dv, n, slots, C, dcount, lf, tag);
      run_variant<4, true, 4>("4-op-interleaved-64regs", dk, dv, n, slots, C, dcount, lf, tag);
      // warpkv's own insert (the anchor), same keys, capacity and timing
      {
        warpkv::open_addressing_config cfg;
        cfg.max_load_factor = 1.0;
        warpkv::linear_map<unsigned, unsigned, 1> map(C, cfg);
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        std::vector<float> ms;
        for (int r = 0; r < 9; ++r) {
          map.clear();
          cudaDeviceSynchronize();
          cudaEventRecord(a, map.exec().stream);
          map.insert(dk, dv, n, nullptr);
          cudaEventRecord(b, map.exec().stream);
          cudaEventSynchronize(b);
          float t;
          cudaEventElapsedTime(&t, a, b);
          if (r >= 2) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        const float med = ms[ms.size() / 2];
        printf("{\"experiment\":\"ops-per-thread\",\"tag\":\"%s\",\"variant\":\"warpkv linear_map insert\",\"capacity\":%zu,"
               "\"load_factor\":%.2f,\"size\":%zu,\"inserted\":%zu,\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,\"gops\":%.4f}\n",
               tag, C, lf, n, map.size(), med, ms.front(), ms.back(), n / (med * 1e6));
        fflush(stdout);
      }
    }
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(slots);
    cudaFree(dcount);
  }
}
