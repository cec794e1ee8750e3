// experiment (session 30): the host front end (cache_submitter, submit_bulk) of one header tree,
// warpkv-bench's `cache --submitter --submit bulk` workload: kv_cache<u64, 8> (capacity 2^24,
// 32-byte values), THREADS client threads each submitting windows of 2 x threshold / THREADS
// operations (even i get_or_set, odd i set, uniform keys; every value of key k starts with k,
// every result checked) and waiting for each; throughput over the wall time, the bytes the
// submitter copied each way against the pinned copy bandwidth measured at the start. Timed from
// after the submitter's construction (its pinned staging allocated) to the last client's last
// result; a partial batch launches after 1 ms (warpkv-bench's default deadline; without one,
// clients out of step would each wait for a batch that the others never fill). At least 16
// batches a row.
// AB_HOST (environment): the host backend (a check that the driver runs; not a measurement).
// usage: ab-sub TAG [THREADS=16] [THRESHOLDS=16384,131072,1048576] [BUFFERS=2,3,4] [OPS=2^23] [WINDOW=2]
// WINDOW: a client's window is WINDOW x threshold / THREADS operations (0: max(2, buffers)).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
#include "warpkv/cache/submitter.hpp"
using u64 = std::uint64_t;
static std::vector<u64> parse(const char* s) { std::vector<u64> v; for (const char* p = s; *p;) { char* e; v.push_back(std::strtoull(p, &e, 10)); p = e; if (*p == ',') ++p; } return v; }
int main(int argc, char** argv) {
  const char* tag = argc > 1 ? argv[1] : "x";
  const unsigned threads = argc > 2 ? (unsigned)std::atoi(argv[2]) : 16;
  const auto thresholds = parse(argc > 3 ? argv[3] : "16384,131072,1048576");
  const auto buffers = parse(argc > 4 ? argv[4] : "2,3,4");
  const u64 ops = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : (u64{1} << 23);
  const u64 wf = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 2;
  using cache_t = warpkv::kv_cache<u64, 8>;
  cache_t cache({.capacity = std::size_t{1} << 24, .value_bytes = 32}, std::getenv("AB_HOST") ? warpkv::execution::host() : warpkv::execution::gpu());
  // pinned copy bandwidth: best of 5 copies of 64 MiB each way
  const std::size_t words = (std::size_t{64} << 20) / 8;
  double ph = 0, pd = 0;
  {
    warpkv::pinned_buffer<u64> host(words, cache.exec());
    std::memset(host.data(), 1, words * 8);
    warpkv::buffer<u64> dev(words, cache.exec());
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      dev.copy_from_host(host.data(), words);
      warpkv::synchronize(cache.exec());
      ph = std::max(ph, words * 8 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9);
      t0 = std::chrono::steady_clock::now();
      dev.copy_to_host(host.data(), words);
      pd = std::max(pd, words * 8 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9);
    }
  }
  for (const u64 nb : buffers)
    for (const u64 threshold : thresholds) {
      const u64 per = (std::max<u64>(ops, 16 * threshold) + threads - 1) / threads;
      const std::size_t window = (std::size_t)std::clamp<u64>((wf != 0 ? wf : std::max<u64>(2, nb)) * threshold / threads, 1, per);
      std::atomic<u64> failures{0};
      u64 bin = 0, bout = 0, batches = 0;
      std::chrono::steady_clock::time_point t0, t1;
      {
        warpkv::cache_submitter<cache_t> sub(cache, threshold, std::chrono::microseconds(1000), nb);
        t0 = std::chrono::steady_clock::now();
        std::vector<std::jthread> pool;
        for (unsigned w = 0; w < threads; ++w)
          pool.emplace_back([&, w] {
            std::mt19937_64 rng(w * 7919 + threshold);
            std::vector<warpkv::cache_op> bops(window);
            std::vector<u64> bkeys(window);
            std::vector<std::byte> in(window * 32), out(window * 32);
            std::vector<warpkv::status> st(window);
            for (u64 done = 0; done < per;) {
              const std::size_t m = (std::size_t)std::min<u64>(window, per - done);
              for (std::size_t i = 0; i < m; ++i) {
                const u64 k = 1 + rng() % cache.capacity();
                bops[i] = i % 2 == 0 ? warpkv::cache_op::get_or_set : warpkv::cache_op::set;
                bkeys[i] = k;
                std::memcpy(in.data() + i * 32, &k, 8);
              }
              sub.submit_bulk(std::span(bops).first(m), std::span(bkeys).first(m), std::span(in).first(m * 32),
                              std::span(out).first(m * 32), std::span(st).first(m)).get();
              for (std::size_t i = 0; i < m; ++i) {
                const bool ok = i % 2 != 0 ? (st[i] == warpkv::status::inserted || st[i] == warpkv::status::assigned)
                                           : ((st[i] == warpkv::status::found || st[i] == warpkv::status::inserted) &&
                                              std::memcmp(out.data() + i * 32, &bkeys[i], 8) == 0);
                if (!ok) ++failures;
              }
              done += m;
            }
          });
        pool.clear();
        t1 = std::chrono::steady_clock::now();
        bin = sub.bytes_to_device();
        bout = sub.bytes_from_device();
        batches = sub.batches();
      }
      const double s = std::chrono::duration<double>(t1 - t0).count();
      const u64 n = per * threads;
      printf("{\"experiment\":\"cache-submitter\",\"tag\":\"%s\",\"window_factor\":%llu,\"threads\":%u,\"buffers\":%llu,\"threshold\":%llu,\"window\":%zu,"
             "\"ops\":%llu,\"batches\":%llu,\"s\":%.4f,\"mops\":%.2f,\"h2d_gbs\":%.3f,\"d2h_gbs\":%.3f,\"pinned_h2d_gbs\":%.2f,"
             "\"pinned_d2h_gbs\":%.2f,\"h2d_fraction_of_pinned\":%.4f,\"d2h_fraction_of_pinned\":%.4f,\"failures\":%llu}\n",
             tag, (unsigned long long)wf, threads, (unsigned long long)nb, (unsigned long long)threshold, window, (unsigned long long)n,
             (unsigned long long)batches, s, n / s / 1e6, bin / s / 1e9, bout / s / 1e9, ph, pd, bin / s / 1e9 / ph,
             bout / s / 1e9 / pd, (unsigned long long)failures.load());
      fflush(stdout);
    }
}
