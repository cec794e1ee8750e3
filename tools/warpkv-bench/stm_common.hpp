#pragma once
// Shared by the warpkv-bench stm workloads (stm_workloads.cpp, stm_map_workload.cpp): the
// splitmix mixer, a spin lock with back-off, per-lane commit counters, the per-item loop of
// every body, and the stm session (timing defaults and the way per-item work is spread).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench.hpp"
#include "session.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"

namespace warpkv_bench::stm_bench {

using warpkv::atomic_ref;
using warpkv::buffer;
using warpkv::execution;
using warpkv::memory_order;
using u64 = std::uint64_t;
using ull = unsigned long long;

// ---- helpers ----------------------------------------------------------------------------------

WARPKV_HD inline u64 mix(u64 x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

WARPKV_HD inline void spin_lock(unsigned* l) {
  for (int attempt = 0;; ++attempt) {
    unsigned expected = 0;
    if (atomic_ref<unsigned>(*l).load(memory_order::relaxed) == 0 &&
        atomic_ref<unsigned>(*l).compare_exchange(expected, 1u, memory_order::acquire))
      return;
    warpkv::backoff(attempt < 64 ? attempt : 64);  // 32 ns .. 32 us on the GPU, a yield on the host
  }
}
WARPKV_HD inline void spin_unlock(unsigned* l) { atomic_ref<unsigned>(*l).store(0u, memory_order::release); }

/// Transfer k of a run: distinct accounts from/to and an amount in [1, 50].
struct transfer_t {
  std::size_t from, to;
  std::int64_t amount;
};
WARPKV_HD inline transfer_t make_transfer(u64 seed, u64 k, std::size_t n) {
  const u64 r = mix(seed ^ (k * 0x9e3779b97f4a7c15ull));
  transfer_t t{};
  t.from = static_cast<std::size_t>(r % n);
  t.to = static_cast<std::size_t>((r >> 21) % (n - 1));
  if (t.to >= t.from) ++t.to;
  t.amount = static_cast<std::int64_t>((r >> 50) % 50) + 1;
  return t;
}

/// Per-lane counters, added to global counters once per lane (launcher's flush).
struct counts {
  ull attempts = 0, commits = 0;
  std::int64_t checksum = 0;  // keeps read-only results observable; not reported
};
WARPKV_HD inline void flush_counts(const counts& c, ull* out) {
  if (c.attempts != 0) atomic_ref<ull>(out[0]).fetch_add(c.attempts, memory_order::relaxed);
  if (c.commits != 0) atomic_ref<ull>(out[1]).fetch_add(c.commits, memory_order::relaxed);
}

// Every body handles items [tile_index * chunk, (tile_index + 1) * chunk), lanes strided.
#define WARPKV_BENCH_FOR_ITEMS(i)                                                             \
  const std::size_t begin_ = tile_index * chunk;                                              \
  const std::size_t end_ = begin_ + chunk < items ? begin_ + chunk : items;                   \
  for (std::size_t i = begin_ + t.thread_rank(); i < end_; i += Tile::size())


/// Adapts a body without accumulator whose items/chunk the session sets.
template <class F>
struct plain_body {
  using accumulator = warpkv::no_accumulator;
  F f;
  std::size_t items = 0, chunk = 0;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i, accumulator&) const {
    F g = f;
    g.items = items;
    g.chunk = chunk;
    g(t, i);
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator&) const {}
};

// ---- backend session ----------------------------------------------------------------------------

/// The shared session (session.hpp) with the stm subcommand's defaults (2 warm-ups and 5 repeats
/// on the GPU, 1 and 2 on the host) and its way of spreading per-item work.
class stm_session : public session {
 public:
  explicit stm_session(const common_options& co) : session(co) {
    default_warmup(2, 1);
    repeats_ = repeats(cuda() ? 5 : 2);
  }

  /// Per-thread work: one item per GPU thread (tiles of 32), chunks of items per host thread.
  template <class Body>
  void run(std::size_t items, Body body) const {
    if (items == 0) return;
    if (cuda()) {
      body.items = items;
      body.chunk = 32;
      warpkv::launch<32>(ex(), (items + 31) / 32, body);
    } else {
      const std::size_t threads = std::max(1u, ex().concurrent_host_tiles());
      body.items = items;
      body.chunk = std::max<std::size_t>(64, std::min<std::size_t>(4096, items / (4 * threads) + 1));
      warpkv::launch<1>(ex(), (items + body.chunk - 1) / body.chunk, body);
    }
  }
  template <class F>
  void run_simple(std::size_t items, F f) const {
    run(items, plain_body<F>{f});
  }

  template <class F>
  static double cpu_ms(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  /// warmup + repeats runs; setup(r) untimed (and waited for) before each, body(r) timed.
  template <class Setup, class Body>
  timing_stats measure(Setup&& setup, Body&& body) {
    std::vector<double> out;
    for (int r = 0; r < warmup() + repeats_; ++r) {
      setup(r);
      warpkv::synchronize(ex());
      const double ms = time_ms([&] {
        body(r);
        if (!cuda()) warpkv::synchronize(ex());
      });
      if (r >= warmup()) out.push_back(ms);
    }
    warpkv::synchronize(ex());
    return summarize(out);
  }
  template <class Body>
  timing_stats measure_cpu(Body&& body) const {
    std::vector<double> out;
    for (int r = 0; r < warmup() + repeats_; ++r) {
      const double ms = cpu_ms([&] { body(r); });
      if (r >= warmup()) out.push_back(ms);
    }
    return summarize(out);
  }

  /// The session's common fields plus the variant; CPU-only baselines say so.
  [[nodiscard]] record base(const std::string& workload, const std::string& variant, bool on_cpu = false) const {
    record r = session::base(workload);
    r.set("variant", variant).set("repeats", repeats_);
    if (on_cpu) r.set("backend", "cpu").set("device", "host CPU (1 thread)").set("timing", "cpu-wall-clock");
    return r;
  }

 private:
  int repeats_ = 2;
};

inline std::vector<ull> zero_stats(buffer<ull>& b) {
  std::vector<ull> z(b.size(), 0);
  b.copy_from_host(z.data(), z.size());
  return z;
}

/// Sum of balances mod 2^64 (exact for the wrap-around arithmetic of every variant).
template <class V>
inline ull sum_mod(const std::vector<V>& v) {
  ull s = 0;
  for (const V x : v) s += static_cast<ull>(x);
  return s;
}

/// The transactional bucketed hash set against per-bucket locks (stm_map_workload.cpp).
int run_stm_map(stm_session& se, const common_options& co, const stm_options& so, std::vector<table_row>& rows);

}  // namespace warpkv_bench::stm_bench
