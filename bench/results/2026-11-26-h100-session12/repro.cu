// Throwaway: repeat HopscotchStash.KeysBeyondTheNeighborhoodLiveInTheStash's scenario and record,
// on the device, where each insert that answered `found` saw its key.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cstdlib>
struct probe_rec { unsigned long long kb, hop; long long offset, stash; unsigned long long value; int where; };
__device__ probe_rec g_probe[4096];
__device__ unsigned g_probe_n;
#ifndef NO_PROBE
#define WARPKV_STASH_PROBE(t, kb, s, w)                                                       \
  do {                                                                                         \
    if ((t).thread_rank() == 0) {                                                              \
      _Pragma("nv_diag_suppress 20011")                                                        \
      NV_IF_TARGET(NV_IS_DEVICE, (unsigned i = atomicAdd(&g_probe_n, 1u); if (i < 4096) g_probe[i] = probe_rec{(unsigned long long)(kb), (unsigned long long)(s).hop, (s).offset, (s).stash, (unsigned long long)(s).value, (w)};)) \
    }                                                                                          \
  } while (0)
#endif
#include "warpkv/hopscotch/hopscotch_map.hpp"
using namespace warpkv;
#ifdef WIDE
using KT = std::uint64_t; using map32 = hopscotch_map<std::uint64_t, std::uint64_t, 1>;
#else
using KT = KT; using map32 = hopscotch_map<KT, KT, 4>;
#endif
struct peek : map32 {
  using map32::map32;
  auto raw() const { return this->slots_.to_vector(); }
};
static std::uint32_t make_key(std::uint64_t i) { return static_cast<KT>((i * 0x9e3779b1ull + 12345u) & (0xffffffffu >> 2)); }
int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 200;
  int fails = 0, printed = 0;
  for (int rep = 0; rep < reps; ++rep) {
    hopscotch_config cfg; cfg.max_load_factor = 1.0;
    peek map(1u << 12, cfg, execution::gpu());
    const std::size_t cap = map.capacity();
    std::vector<KT> keys;
    { const auto r = map.ref(); for (std::uint64_t k = 1; keys.size() < 48; ++k) if (r.home((KT)k) == 100) keys.push_back((KT)k); }
    std::vector<KT> v1(48), v3(48), v5(48);
    for (int i = 0; i < 48; ++i) v1[i] = i + 1, v3[i] = 1000 + i, v5[i] = 5000 + i;
    { unsigned zero = 0; cudaMemcpyToSymbol(g_probe_n, &zero, sizeof zero); }
    { auto st1 = map.insert(std::span<const KT>(keys), std::span<const KT>(v1)); int bad1 = 0; for (auto s : st1) bad1 += s != status::inserted;
      if (bad1) { ++fails; if (printed++ < 3) {
        std::vector<KT> out; auto stf = map.find(std::span<const KT>(keys), out);
        printf("rep %d phase1: %d not inserted, size %zu stashed %zu rehashes %zu validate '%s'\n", rep, bad1, map.size(), map.stashed(), map.rehash_count(), map.validate().c_str());
        for (int i = 0; i < 48; ++i) printf("  key %d (%llu) phase1 %d find %d out %llu\n", i, (unsigned long long)keys[i], (int)st1[i], (int)stf[i], (unsigned long long)out[i]);
        unsigned n = 0; cudaMemcpyFromSymbol(&n, g_probe_n, sizeof n);
        std::vector<probe_rec> pr(n < 4096 ? n : 4096); cudaMemcpyFromSymbol(pr.data(), g_probe, pr.size() * sizeof(probe_rec));
        for (auto& p : pr) { int idx = -1; for (int i = 0; i < 48; ++i) if (keys[i] == p.kb) idx = i;
          printf("  probe key %d where %d hop %016llx (ver %llu ovf %d lock %d bm %08llx) offset %lld stash %lld value %llu\n", idx, p.where, p.hop, p.hop >> 34, (int)((p.hop >> 33) & 1), (int)((p.hop >> 32) & 1), p.hop & 0xffffffffull, p.offset, p.stash, p.value); }
        const auto after = map.raw();
        auto word = [](const auto& sl) { if constexpr (requires { sl.pair; }) return (unsigned long long)sl.pair; else return (unsigned long long)sl.key; };
        auto val = [](const auto& sl) { if constexpr (requires { sl.pair; }) return 0ull; else return (unsigned long long)sl.value; };
        printf("  bucket 100 hop %016llx\n", (unsigned long long)after[100].meta);
        for (std::size_t j = 96; j < 140; ++j) printf("  slot %zu %016llx/%llu\n", j, word(after[j]), val(after[j]));
        for (std::size_t j = cap; j < after.size(); ++j) printf("  stash %zu %016llx/%llu\n", j - cap, word(after[j]), val(after[j]));
      } continue; } }
    for (auto s : map.insert_or_assign(std::span<const KT>(keys), std::span<const KT>(v3))) if (s != status::assigned) { printf("phase3 bad\n"); return 2; }
    std::vector<KT> evens; for (int i = 0; i < 48; i += 2) evens.push_back(keys[i]);
    for (auto s : map.erase(std::span<const KT>(evens))) if (s != status::erased) { printf("phase4 bad\n"); return 2; }
    { std::vector<KT> out; auto st = map.find(std::span<const KT>(keys), out);
      for (int i = 0; i < 48; ++i) if ((i % 2 == 0) != (st[i] == status::not_found)) { printf("rep %d phase4 find bad key %d\n", rep, i); return 2; } }
    const auto before = map.raw();
    unsigned zero = 0; cudaMemcpyToSymbol(g_probe_n, &zero, sizeof zero);
    auto st5 = map.insert(std::span<const KT>(keys), std::span<const KT>(v5));
    cudaDeviceSynchronize();
    int bad = 0;
    for (int i = 0; i < 48; ++i) bad += (i % 2 == 0) ? st5[i] != status::inserted : st5[i] != status::found;
    std::vector<KT> out; auto st6 = map.find(std::span<const KT>(keys), out);
    int missing = 0; for (int i = 0; i < 48; ++i) missing += st6[i] != status::found;
    if (bad || missing || map.size() != 48) {
      ++fails;
      if (printed++ < 3) {
        printf("rep %d: %d wrong statuses, %d missing after, size %zu stashed %zu validate '%s'\n", rep, bad, missing, map.size(), map.stashed(), map.validate().c_str());
        for (int i = 0; i < 48; ++i) printf("  key %d (%u) phase5 %d find %d out %u\n", i, keys[i], (int)st5[i], (int)st6[i], out[i]);
        unsigned n = 0; cudaMemcpyFromSymbol(&n, g_probe_n, sizeof n);
        std::vector<probe_rec> pr(n < 4096 ? n : 4096); cudaMemcpyFromSymbol(pr.data(), g_probe, pr.size() * sizeof(probe_rec));
        for (auto& p : pr) { int idx = -1; for (int i = 0; i < 48; ++i) if (keys[i] == p.kb) idx = i;
          printf("  probe key %d where %d hop %016llx (ver %llu ovf %d lock %d bm %08llx) offset %lld stash %lld value %llu\n", idx, p.where, p.hop, p.hop >> 34, (int)((p.hop >> 33) & 1), (int)((p.hop >> 32) & 1), p.hop & 0xffffffffull, p.offset, p.stash, p.value); }
        const auto after = map.raw();
        printf("  bucket 100 hop before %016llx after %016llx\n", (unsigned long long)before[100].meta, (unsigned long long)after[100].meta);
        auto word = [](const auto& sl) { if constexpr (requires { sl.pair; }) return (unsigned long long)sl.pair; else return (unsigned long long)sl.key; };
        auto val = [](const auto& sl) { if constexpr (requires { sl.pair; }) return 0ull; else return (unsigned long long)sl.value; };
        for (std::size_t j = 96; j < 140; ++j) printf("  slot %zu before %016llx/%llu after %016llx/%llu\n", j, word(before[j]), val(before[j]), word(after[j]), val(after[j]));
        for (std::size_t j = cap; j < before.size(); ++j) printf("  stash %zu before %016llx/%llu after %016llx/%llu\n", j - cap, word(before[j]), val(before[j]), word(after[j]), val(after[j]));
      }
    }
  }
  printf("fails %d of %d\n", fails, reps);
  return fails ? 1 : 0;
}
