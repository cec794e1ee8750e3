// warpkv::stm: semantics of one transaction, then racing transactions on the chosen backend:
// bank invariants under heavy contention (with audits that read every account), a history
// checker (committed transactions serializable, every read - also of aborted attempts -
// consistent), zombies, multi-object atomicity, 64-object transactions, progress under 100%
// conflict, and bad input. Each race runs for both modes; per-tile variants run on tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../common/backend.hpp"
#include "warpkv/core/aggregate.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/stm/stm.hpp"

namespace warpkv::testing {
namespace {

using u64 = std::uint64_t;
using ull = unsigned long long;
using stm::mode;
using stm::tx_status;

struct wide {  // 64 bytes: the largest object, 8 words
  u64 w[8];
};
struct tagged {  // 32 bytes: every word holds the tag of the transaction that wrote it
  u64 tag[4];
};
struct too_big {
  u64 w[9];
};
struct odd_size {  // 12 bytes: 2 words, the last one padded
  std::uint32_t a, b, c;
};

// Compile-time refusals (a heap<too_big> does not compile: "objects ... at most 64 bytes").
static_assert(stm::transactional_object<wide>);
static_assert(stm::transactional_object<odd_size>);
static_assert(!stm::transactional_object<too_big>);
static_assert(!stm::transactional_object<const u64>);
static_assert(stm::heap<wide>::words_per_object == 8);
static_assert(stm::heap<odd_size>::words_per_object == 2);
static_assert(stm::heap<std::int32_t>::words_per_object == 1);

WARPKV_HD inline u64 mix(u64 x) {  // splitmix64 finalizer: per-stream pseudo-random choices
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Host threads would run whole transactions inside one time slice; yielding inside a
// transaction (every few calls) makes them interleave the way GPU threads do. No-op on the GPU.
WARPKV_HD inline void stall(u64 r) {
#if !WARPKV_DEVICE_PASS
  if ((r & 3) == 0) std::this_thread::yield();
#else
  (void)r;
#endif
}

WARPKV_HD inline void count(ull* counters, int k, ull v = 1) {
  if (v != 0) atomic_ref<ull>(counters[k]).fetch_add(v, memory_order::relaxed);
}

std::size_t scaled(double n, std::size_t min = 1) {
  return std::max<std::size_t>(min, static_cast<std::size_t>(n * test_scale()));
}
bool on_gpu(const execution& ex) { return ex.where == backend::cuda; }
// Many racing lanes: on the host backend `tiles` tiles of N lanes are that many threads.
execution racing(const execution& ex, unsigned tiles = 8) { return on_gpu(ex) ? ex : execution::host(tiles); }

std::vector<ull> zeros(std::size_t n) { return std::vector<ull>(n, 0); }
buffer<ull> counters(std::size_t n, const execution& ex) {
  buffer<ull> b(n, ex);
  const auto z = zeros(n);
  b.copy_from_host(z.data(), n);
  return b;
}

// ---- 0. the clock's warp-aggregated increments (core/aggregate.hpp) -------------------------

// Racing tiles: each round a random subset of a tile's lanes takes a value from counter[0]
// through the tile collective, and a random, divergent subset takes one from counter[1] through
// active_lanes (on the GPU the lanes converged there; on the host each thread alone). values
// holds value + 1 per (tile, round, lane), 0 where the lane took none.
struct aggregate_body {
  u64* counter;
  u64* values;  // two halves of `half` slots: tile collective, active_lanes
  std::size_t half;
  unsigned rounds;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    for (unsigned r = 0; r < rounds; ++r) {
      const std::size_t slot = (i * rounds + r) * Tile::size() + t.thread_rank();
      const bool want = (mix(slot) & 3) != 0;
      const u64 v = aggregated_fetch_add(t, atomic_ref<u64>(counter[0]), u64{2}, want, memory_order::relaxed);
      values[slot] = want ? v + 1 : 0;
      stall(mix(slot) >> 8);
      values[half + slot] = 0;
      if ((mix(slot ^ 0x5555) & 1) != 0) {
        const active_lanes w;
        values[half + slot] = aggregated_fetch_add(w, atomic_ref<u64>(counter[1]), u64{2}, true, memory_order::relaxed) + 1;
      }
    }
  }
};

TEST(StmClock, AggregatedIncrementsAreDistinct) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = racing(ex0);
  constexpr int T = 8;
  const std::size_t tiles = on_gpu(ex) ? 8192 : 64;
  const unsigned rounds = static_cast<unsigned>(scaled(on_gpu(ex) ? 64 : 100, 4));
  const std::size_t half = tiles * rounds * T;
  buffer<u64> counter(2, ex);
  const u64 zero[2] = {0, 0};
  counter.copy_from_host(zero, 2);
  buffer<u64> values(2 * half, ex);
  launch<T>(ex, tiles, simple_body<aggregate_body>{{counter.data(), values.data(), half, rounds}});
  const auto c = counter.to_vector();
  const std::vector<u64> v = values.to_vector();
  for (int k = 0; k < 2; ++k) {
    // Every taken value is old + 2j: distinct, even, and together exactly 0, 2, .., counter - 2.
    std::vector<u64> taken;
    for (std::size_t j = 0; j < half; ++j)
      if (v[k * half + j] != 0) taken.push_back(v[k * half + j] - 1);
    std::sort(taken.begin(), taken.end());
    ASSERT_FALSE(taken.empty());
    EXPECT_EQ(c[k], 2 * taken.size()) << "half " << k << ": the counter moved by other than 2 per taker";
    for (std::size_t j = 0; j < taken.size(); ++j)
      ASSERT_EQ(taken[j], 2 * j) << "half " << k << ": a value was handed out twice or skipped";
  }
}

// ---- 1. one transaction, one thread: the semantics of each operation -----------------------

template <mode M>
struct scenario_body {
  stm::heap_ref<u64, M> h;     // 32 objects, object j = 100 + j
  stm::heap_ref<wide, M> w;    // 4 objects, word i of object j = 1000 j + i
  stm::heap_ref<odd_size, M> odd;
  u64* out;

  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t) const {
    if (t.thread_rank() != 0) return;
    int o = 0;
    auto put = [&](u64 v) { out[o++] = v; };
    auto st = [](const auto& tx) { return static_cast<u64>(tx.status()); };
    using tx_t = stm::transaction<u64, M>;
    {  // 0: read-modify-write and reading one's own writes
      tx_t tx(h, 1);
      put(st(tx));  // idle
      tx.begin();
      const u64 a = tx.read(3);
      put(a);
      tx.write(3, a + 1);
      put(tx.read(3));
      tx.write(3, 7);
      put(tx.read(3));
      put(static_cast<u64>(tx.footprint()));
      put(tx.commit());
      put(st(tx));
      const auto e = tx.footprint_entry(0);
      put(e.id), put(e.read), put(e.written), put(e.version), put(e.installed);
    }
    {  // 1: read-only, every object read twice (the second read checks the version)
      tx_t tx(h, 2);
      tx.begin();
      u64 s = 0;
      for (int r = 0; r < 2; ++r)
        for (std::size_t j = 0; j < 10; ++j) s += tx.read(j);
      put(s);
      put(static_cast<u64>(tx.footprint()));
      put(tx.commit());
      put(tx.footprint_entry(3).installed);
    }
    {  // 2: write-only (blind writes)
      tx_t tx(h, 3);
      tx.begin();
      for (std::size_t j = 10; j < 15; ++j) tx.write(j, 5000 + j);
      put(tx.commit());
      const auto e = tx.footprint_entry(0);
      put(e.read), put(e.written), put(e.version), put(e.installed);
    }
    {  // 3: abort by the user
      tx_t tx(h, 4);
      tx.begin();
      tx.write(20, 1);
      put(tx.read(20));
      tx.abort();
      put(st(tx));
      put(tx.commit());
      u64 v = 55;
      put(tx.read(21, v));
      put(v);
      put(static_cast<u64>(stm::atomically(tx, [](auto& x) {
        x.write(20, 2);
        x.abort();
      })));
      put(tx.attempts());
    }
    {  // 4: write-set overflow (WriteCapacity 4)
      stm::transaction<u64, M, 16, 4> tx(h, 5);
      tx.begin();
      for (std::size_t j = 0; j < 5; ++j) put(tx.write(24 + j, 1));
      put(st(tx));
      put(tx.commit());
      put(static_cast<u64>(stm::atomically(tx, [](auto& x) {
        for (std::size_t j = 0; j < 5; ++j) x.write(24 + j, 2);
      })));
    }
    {  // 5: access-set overflow (Capacity 4), by reads and by a write
      stm::transaction<u64, M, 4, 2> tx(h, 6);
      tx.begin();
      u64 v = 0;
      for (std::size_t j = 0; j < 5; ++j) put(tx.read(j, v));
      put(st(tx));
      tx.begin();
      for (std::size_t j = 0; j < 4; ++j) tx.read(j, v);
      put(tx.write(30, 1));
      put(st(tx));
      put(tx.commit());
    }
    {  // 6: ids out of range
      tx_t tx(h, 7);
      tx.begin();
      u64 v = 42;
      put(tx.read(32, v));
      put(v);
      put(st(tx));
      tx.begin();
      put(tx.write(1000, 1));
      put(st(tx));
      tx.begin();
      put(tx.read(~std::size_t{0}, v));
      put(st(tx));
      put(tx.commit());
    }
    {  // 7: an empty transaction commits
      tx_t tx(h, 8);
      tx.begin();
      put(tx.commit());
      put(st(tx));
    }
    {  // 8: a 64-byte object: read, modify two words, read own write, commit
      stm::transaction<wide, M> tx(w, 9);
      tx.begin();
      wide a = tx.read(2);
      put(a.w[0]), put(a.w[7]);
      a.w[0] = 1;
      a.w[7] = 9;
      tx.write(2, a);
      const wide b = tx.read(2);
      put(b.w[0]), put(b.w[7]);
      put(tx.commit());
    }
    {  // 9: a 12-byte object (padded word)
      stm::transaction<odd_size, M> tx(odd, 10);
      const auto s = stm::atomically(tx, [](auto& x) {
        odd_size v = x.read(1);
        v.c += 5;
        x.write(1, v);
      });
      put(static_cast<u64>(s));
    }
    {  // 10: a later transaction sees exactly the committed state
      tx_t tx(h, 11);
      tx.begin();
      put(tx.read(3)), put(tx.read(10)), put(tx.read(20)), put(tx.read(24)), put(tx.read(30));
      put(tx.commit());
    }
    out[255] = static_cast<u64>(o);
  }
};

template <mode M>
void run_scenarios() {
  WARPKV_TEST_EXECUTION(ex);
  std::vector<u64> init(32);
  std::iota(init.begin(), init.end(), u64{100});
  stm::heap<u64, M> h(std::span<const u64>(init), ex);
  std::vector<wide> winit(4);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 8; ++i) winit[j].w[i] = 1000u * j + i;
  stm::heap<wide, M> w(std::span<const wide>(winit), ex);
  std::vector<odd_size> oinit(3, odd_size{1, 2, 3});
  stm::heap<odd_size, M> odd(std::span<const odd_size>(oinit), ex);
  buffer<u64> out(256, ex);
  launch<1>(ex, 1, simple_body<scenario_body<M>>{{h.ref(), w.ref(), odd.ref(), out.data()}});
  const auto o = out.to_vector();
  const u64 C = static_cast<u64>(tx_status::committed);
  const bool opaque = M == mode::opaque;
  const std::vector<u64> expect = {
      // 0
      static_cast<u64>(tx_status::idle), 103, 104, 7, 1, 1, C, 3, 1, 1, 0, 1,
      // 1: 2 x (100 + ... + 109 - 103 + 7)
      2 * (1045 - 103 + 7), 10, 1, 1,  // object 3 keeps the version scenario 0 gave it
      // 2: blind write: replaced version 0; installed: the clock (opaque) or 0 + 1
      1, 0, 1, 0, opaque ? 2u : 1u,
      // 3
      1, static_cast<u64>(tx_status::user_abort), 0, 0, 55, static_cast<u64>(tx_status::user_abort), 2,
      // 4
      1, 1, 1, 1, 0, static_cast<u64>(tx_status::write_set_full), 0, static_cast<u64>(tx_status::write_set_full),
      // 5
      1, 1, 1, 1, 0, static_cast<u64>(tx_status::access_set_full), 0, static_cast<u64>(tx_status::access_set_full), 0,
      // 6
      0, 42, static_cast<u64>(tx_status::invalid_id), 0, static_cast<u64>(tx_status::invalid_id), 0,
      static_cast<u64>(tx_status::invalid_id), 0,
      // 7
      1, C,
      // 8
      2000, 2007, 1, 9, 1,
      // 9
      C,
      // 10
      7, 5010, 120, 124, 130, 1};
  ASSERT_EQ(o[255], expect.size());
  for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(o[i], expect[i]) << "output " << i;

  // Memory after the scenarios: only committed writes are there, versions moved only for them.
  const auto v = h.to_vector();
  const auto ver = h.versions();
  for (u64 j = 0; j < 32; ++j) {
    u64 want = 100 + j, want_ver = 0;
    if (j == 3) want = 7, want_ver = 1;
    if (j >= 10 && j < 15) want = 5000 + j, want_ver = opaque ? 2 : 1;
    EXPECT_EQ(v[j], want) << "object " << j;
    EXPECT_EQ(ver[j], want_ver) << "object " << j;
  }
  for (u64 lw : h.lock_words()) EXPECT_FALSE(stm::detail::is_locked(lw));
  EXPECT_EQ(h.clock(), opaque ? 2u : 0u);  // two update commits; baseline has no clock
  const auto wv = w.to_vector();
  EXPECT_EQ(wv[2].w[0], 1u);
  EXPECT_EQ(wv[2].w[7], 9u);
  EXPECT_EQ(wv[2].w[3], 2003u);
  EXPECT_EQ(wv[1].w[7], 1007u);
  const auto ov = odd.to_vector();
  EXPECT_EQ(ov[1].c, 8u);
  EXPECT_EQ(ov[1].a, 1u);
  EXPECT_EQ(ov[0].c, 3u);
}

TEST(StmSemantics, OpaqueSingleTransactionOperations) { run_scenarios<mode::opaque>(); }
TEST(StmSemantics, BaselineSingleTransactionOperations) { run_scenarios<mode::baseline>(); }

TEST(StmSemantics, BadInputIsRefusedWithClearErrors) {
  WARPKV_TEST_EXECUTION(ex);
  try {
    stm::heap<u64> h(0, ex);
    FAIL() << "a heap of zero objects was accepted";
  } catch (const warpkv::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'n'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((stm::heap<u64>(std::span<const u64>(), ex)), warpkv::error);
  EXPECT_THROW((stm::heap<u64>(std::size_t{1} << 33, ex)), warpkv::error);  // ids are 32-bit
  stm::heap<u64> h(4, ex);
  const std::vector<u64> three(3, 1);
  try {
    h.assign(three);
    FAIL() << "assign with the wrong size was accepted";
  } catch (const warpkv::error& e) {
    EXPECT_NE(std::string(e.what()).find("values"), std::string::npos) << e.what();
  }
  EXPECT_EQ(h.to_vector(), std::vector<u64>(4, 0));
  h.fill(9);
  EXPECT_EQ(h.to_vector(), std::vector<u64>(4, 9));
  EXPECT_EQ(stm::to_string(tx_status::write_set_full), "write_set_full");
  EXPECT_EQ(stm::to_string(mode::opaque), "opaque");
}

// ---- 2. bank: transfers among N accounts, audits reading every account ----------------------

struct bank_stats {
  enum : int { commits, attempts, audits, live_bad_audits, committed_bad_audits, refused, count_ };
};

template <mode M, int AuditCapacity>
struct bank_ops {
  stm::heap_ref<std::int64_t, M> accounts;
  std::int64_t total;
  unsigned transfers;  // per stream
  unsigned audit_every;  // every k-th transaction of a stream reads all accounts (0: never)
  unsigned escalate_after;  // atomically's escalation to serial mode
  unsigned queue_after;     // atomically's contention queueing
  ull* stats;

  template <class Tx, class AuditTx>
  WARPKV_HD void stream(Tx& tx, AuditTx& audit, u64 stream_id, bool leader) const {
    const std::size_t n = accounts.size();
    ull commits = 0, audits = 0, live_bad = 0, committed_bad = 0, refused = 0;
    for (unsigned k = 0; k < transfers; ++k) {
      const u64 r = mix(stream_id * 1000003u + k);
      if (audit_every != 0 && k % audit_every == audit_every - 1) {
        std::int64_t sum = 0;
        bool bad = false;
        const tx_status s = stm::atomically(audit, [&](auto& a) {
          sum = 0;
          bool negative = false;
          for (std::size_t j = 0; j < n; ++j) {
            std::int64_t v = 0;
            if (!a.read(j, v)) return;
            if (j == n / 2) stall(r >> 8);
            sum += v;
            negative = negative || v < 0;
          }
          bad = sum != total || negative;  // all reads returned: the attempt is live
          if (bad) ++live_bad;
        }, 0, escalate_after, queue_after);
        ++audits;
        if (s == tx_status::committed && bad) ++committed_bad;
        continue;
      }
      const std::size_t from = static_cast<std::size_t>(r % n);
      std::size_t to = static_cast<std::size_t>((r >> 20) % (n - 1));
      if (to >= from) ++to;
      const std::int64_t amount = static_cast<std::int64_t>((r >> 40) % 50) + 1;
      bool done = false;
      const tx_status s = stm::atomically(tx, [&](auto& x) {
        std::int64_t a = 0, b = 0;
        done = false;
        if (!x.read(from, a)) return;
        stall(r >> 4);
        if (!x.read(to, b)) return;
        if (a < amount) return;  // insufficient funds: commits as read-only
        stall(r >> 6);
        x.write(from, a - amount);
        x.write(to, b + amount);
        done = true;
      }, 0, escalate_after, queue_after);
      if (s == tx_status::committed) ++commits;
      if (!done) ++refused;
    }
    if (leader) {
      count(stats, bank_stats::commits, commits);
      count(stats, bank_stats::attempts, tx.attempts() + audit.attempts());
      count(stats, bank_stats::audits, audits);
      count(stats, bank_stats::live_bad_audits, live_bad);
      count(stats, bank_stats::committed_bad_audits, committed_bad);
      count(stats, bank_stats::refused, refused);
    }
  }
};

template <mode M, int AuditCapacity>
struct bank_thread_body {  // every lane runs its own stream of per-thread transactions
  bank_ops<M, AuditCapacity> ops;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    const u64 id = i * Tile::size() + t.thread_rank();
    stm::transaction<std::int64_t, M, 2, 2> tx(ops.accounts, id);
    stm::transaction<std::int64_t, M, AuditCapacity, 1> audit(ops.accounts, ~id);
    ops.stream(tx, audit, id, true);
  }
};

template <mode M, int AuditCapacity>
struct bank_tile_body {  // the tile runs one stream of tile transactions
  bank_ops<M, AuditCapacity> ops;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    stm::tile_transaction<Tile, std::int64_t, M, 2, 2> tx(t, ops.accounts, i);
    stm::tile_transaction<Tile, std::int64_t, M, AuditCapacity, 1> audit(t, ops.accounts, ~u64{i});
    ops.stream(tx, audit, i, t.thread_rank() == 0);
  }
};

template <mode M, bool PerTile>
void run_bank(std::size_t n, std::size_t streams, unsigned transfers, unsigned audit_every,
              unsigned escalate_after = stm::default_escalation, unsigned queue_after = stm::default_queueing) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = racing(ex0);
  const std::int64_t initial = 100;
  stm::heap<std::int64_t, M> accounts(n, ex);
  accounts.fill(initial);
  auto stats = counters(bank_stats::count_, ex);
  const std::int64_t total = initial * static_cast<std::int64_t>(n);
  constexpr int audit_cap = 128;
  ASSERT_TRUE(audit_every == 0 || n <= audit_cap);
  const bank_ops<M, audit_cap> ops{accounts.ref(), total, transfers, audit_every, escalate_after, queue_after, stats.data()};
  const auto t0 = std::chrono::steady_clock::now();
  if constexpr (PerTile) {
    constexpr int T = 4;
    launch<T>(ex, streams, simple_body<bank_tile_body<M, audit_cap>>{{ops}});
  } else {
    constexpr int T = 8;
    launch<T>(ex, (streams + T - 1) / T, simple_body<bank_thread_body<M, audit_cap>>{{ops}});
    streams = (streams + T - 1) / T * T;
  }
  const auto s = stats.to_vector();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto bal = accounts.to_vector();
  std::int64_t sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    ASSERT_GE(bal[j], 0) << "account " << j << " went negative";
    sum += bal[j];
  }
  EXPECT_EQ(sum, total) << "money created or lost";
  const ull txs = s[bank_stats::commits] + s[bank_stats::audits];
  EXPECT_EQ(txs, static_cast<ull>(streams) * transfers) << "every transaction must commit";
  EXPECT_EQ(s[bank_stats::committed_bad_audits], 0u) << "a committed audit saw an inconsistent sum";
  if (M == mode::opaque) {
    EXPECT_EQ(s[bank_stats::live_bad_audits], 0u) << "opacity: a live audit saw an inconsistent sum";
  }
  for (u64 lw : accounts.lock_words()) ASSERT_FALSE(stm::detail::is_locked(lw));
  std::printf("[bank %s %s] N=%zu txs=%llu attempts=%llu (abort ratio %.2f) serial=%llu queued=%llu refused=%llu "
              "audits=%llu live-inconsistent audits=%llu  %.3f s\n",
              std::string(stm::to_string(M)).c_str(), PerTile ? "tile" : "thread", n, txs, s[bank_stats::attempts],
              1.0 - static_cast<double>(txs) / static_cast<double>(std::max<ull>(1, s[bank_stats::attempts])),
              static_cast<ull>(accounts.serial_escalations()), static_cast<ull>(accounts.queued_retries()),
              s[bank_stats::refused], s[bank_stats::audits], s[bank_stats::live_bad_audits], secs);
  if (M == mode::opaque && escalate_after == 1 && s[bank_stats::attempts] > txs) {
    EXPECT_GT(accounts.serial_escalations(), 0u) << "conflicts happened but nothing escalated";
  }
  if (M == mode::opaque && escalate_after == 0) {
    EXPECT_EQ(accounts.serial_escalations(), 0u) << "escalation was off";
    if (queue_after == 1 && s[bank_stats::attempts] > txs) {
      EXPECT_GT(accounts.queued_retries(), 0u) << "conflicts happened but nothing queued";
    }
  }
  if (M == mode::baseline || queue_after == 0) {
    EXPECT_EQ(accounts.queued_retries(), 0u) << "queueing was off";
  }
}

std::size_t bank_streams(const execution& ex) { return on_gpu(ex) ? 16384 : 64; }

TEST(StmBank, OpaqueHeavyContention) {
  WARPKV_TEST_EXECUTION(ex);
  for (std::size_t n : {2, 16, 128}) run_bank<mode::opaque, false>(n, bank_streams(ex), static_cast<unsigned>(scaled(60, 8)), 8);
}
TEST(StmBank, OpaqueLowContentionLargeHeaps) {
  WARPKV_TEST_EXECUTION(ex);
  for (std::size_t n : {std::size_t{1024}, std::size_t{1} << 20})
    run_bank<mode::opaque, false>(n, bank_streams(ex), static_cast<unsigned>(scaled(60, 8)), 0);
}
// Every conflict escalates: the serial path (tickets, serial flag, waiting at begin) under load.
TEST(StmBank, OpaqueSerialEscalation) {
  WARPKV_TEST_EXECUTION(ex);
  for (std::size_t n : {2, 16}) run_bank<mode::opaque, false>(n, bank_streams(ex), static_cast<unsigned>(scaled(40, 8)), 8, 1);
  run_bank<mode::opaque, true>(16, on_gpu(ex) ? 4096 : 16, static_cast<unsigned>(scaled(30, 8)), 8, 1);
}
// Contention queues alone (no serial escalation: nothing stops the heap) under 100% conflict
// on 2 and 16 accounts: every transaction must still commit, per thread and per tile.
TEST(StmBank, OpaqueContentionQueuesNeverLivelock) {
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t streams = on_gpu(ex) ? 4096 : bank_streams(ex);  // GPU: 100% conflict, keep it short
  for (std::size_t n : {2, 16}) run_bank<mode::opaque, false>(n, streams, static_cast<unsigned>(scaled(40, 8)), 8, 0, 1);
  run_bank<mode::opaque, true>(2, on_gpu(ex) ? 4096 : 16, static_cast<unsigned>(scaled(30, 8)), 8, 0, 1);
}
// The design before contention queues: escalation to serial mode alone.
TEST(StmBank, OpaqueEscalationWithoutQueues) {
  WARPKV_TEST_EXECUTION(ex);
  run_bank<mode::opaque, false>(16, on_gpu(ex) ? 4096 : bank_streams(ex), static_cast<unsigned>(scaled(40, 8)), 8,
                                stm::default_escalation, 0);
}
TEST(StmBank, BaselineHeavyContention) {
  WARPKV_TEST_EXECUTION(ex);
  for (std::size_t n : {2, 16, 128}) run_bank<mode::baseline, false>(n, bank_streams(ex), static_cast<unsigned>(scaled(40, 8)), 8);
}
TEST(StmBank, OpaqueTileTransactions) {
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t streams = on_gpu(ex) ? 4096 : 16;
  for (std::size_t n : {2, 128, 4096}) run_bank<mode::opaque, true>(n, streams, static_cast<unsigned>(scaled(40, 8)), n <= 128 ? 8 : 0);
}
TEST(StmBank, BaselineTileTransactions) {
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t streams = on_gpu(ex) ? 4096 : 16;
  for (std::size_t n : {16, 128}) run_bank<mode::baseline, true>(n, streams, static_cast<unsigned>(scaled(30, 8)), 8);
}

// ---- 3. history checker: serializability of commits, consistency of every read --------------

constexpr int max_ops = 4;
struct rec_entry {
  u64 version;    // version read (read entries) or replaced (writes)
  u64 installed;  // version after commit
  u64 tag;        // tag read (read entries)
  std::uint32_t id;
  std::uint8_t read, written, pad0, pad1;
};
struct record {
  u64 tag;  // (transaction index + 1) << 20 | attempt: what its writes store in every word
  std::uint32_t n, committed;
  rec_entry e[max_ops];
};

template <mode M>
struct history_ops {
  stm::heap_ref<tagged, M> heap;
  record* committed;  // one per transaction
  record* aborted;    // attempts that did not commit, appended
  ull* counters;      // [0] aborted records claimed, [1] torn objects seen while live
  std::size_t aborted_cap;
  unsigned escalate_after;  // attempts before enter_serial (opaque; 0: never)
  unsigned queue_after;     // attempts before enter_queue (opaque; 0: never)

  template <class Tx>
  WARPKV_HD void run(Tx& tx, u64 index, bool leader) const {
    const std::size_t n = heap.size();
    u64 r = mix(index);
    const int k = 1 + static_cast<int>(r % max_ops);
    std::uint32_t ids[max_ops];
    int kinds[max_ops];  // 0 read, 1 blind write, 2 read-modify-write
    for (int j = 0; j < k; ++j) {
      for (;;) {
        r = mix(r);
        const auto id = static_cast<std::uint32_t>(r % n);
        bool dup = false;
        for (int q = 0; q < j; ++q) dup = dup || ids[q] == id;
        if (!dup) {
          ids[j] = id;
          break;
        }
      }
      kinds[j] = static_cast<int>((r >> 32) % 3);
    }
    for (unsigned attempt = 0;; ++attempt) {
      if (escalate_after != 0 && attempt == escalate_after) {
        tx.leave_queue();
        tx.enter_serial();
      } else if (queue_after != 0 && attempt == queue_after) {
        tx.enter_queue();
      }
      tx.begin();
      const u64 tag = ((index + 1) << 20) | (attempt & 0xfffff);
      u64 seen[max_ops] = {};
      ull torn = 0;
      for (int j = 0; j < k; ++j) {
        if (kinds[j] != 1) {
          tagged v{};
          if (!tx.read(ids[j], v)) break;
          if (v.tag[1] != v.tag[0] || v.tag[2] != v.tag[0] || v.tag[3] != v.tag[0]) ++torn;
          seen[j] = v.tag[0];
        }
        stall(mix(tag + static_cast<u64>(j)));
        if (kinds[j] != 0 && !tx.write(ids[j], tagged{{tag, tag, tag, tag}})) break;
      }
      if (tx.status() == tx_status::active) tx.commit();
      const bool ok = tx.status() == tx_status::committed;
      if (leader) {
        count(counters, 1, torn);
        record* rec = nullptr;
        if (ok) {
          rec = &committed[index];
        } else {
          const ull slot = atomic_ref<ull>(counters[0]).fetch_add(1, memory_order::relaxed);
          if (slot < aborted_cap) rec = &aborted[slot];
        }
        if (rec != nullptr) {
          rec->tag = tag;
          rec->committed = ok ? 1u : 0u;
          rec->n = static_cast<std::uint32_t>(tx.footprint());
          for (int q = 0; q < tx.footprint(); ++q) {
            const auto a = tx.footprint_entry(q);
            rec_entry& e = rec->e[q];
            e.id = static_cast<std::uint32_t>(a.id);
            e.read = a.read ? 1 : 0;
            e.written = a.written ? 1 : 0;
            e.version = a.version;
            e.installed = a.installed;
            e.tag = 0;
            for (int j = 0; j < k; ++j)
              if (ids[j] == e.id) e.tag = seen[j];
          }
        }
      }
      if (ok) {
        tx.leave_queue();
        tx.leave_serial();
        return;
      }
      tx.backoff(attempt);
    }
  }
};

template <mode M>
struct history_thread_body {
  history_ops<M> ops;
  std::size_t txs;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    const u64 index = i * Tile::size() + t.thread_rank();
    if (index >= txs) return;
    stm::transaction<tagged, M, max_ops, max_ops> tx(ops.heap, index);
    ops.run(tx, index, true);
  }
};

template <mode M>
struct history_tile_body {
  history_ops<M> ops;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    stm::tile_transaction<Tile, tagged, M, max_ops, max_ops> tx(t, ops.heap, i);
    ops.run(tx, i, t.thread_rank() == 0);
  }
};

struct history_report {
  std::size_t committed = 0, aborted = 0;
  std::size_t chain_errors = 0;         // two commits installed one version, or overwrote one version, ...
  std::size_t bad_committed_reads = 0;  // a committed read of a version no commit wrote, or of other data
  std::size_t bad_aborted_reads = 0;
  bool committed_acyclic = true;  // committed transactions are conflict-serializable
  bool all_acyclic = true;        // ... together with every aborted attempt's reads (opacity)
  std::string first_problem;
  void problem(const std::string& s) {
    if (first_problem.empty()) first_problem = s;
  }
};

bool acyclic(std::size_t nodes, const std::vector<std::pair<std::size_t, std::size_t>>& edges, std::size_t limit) {
  std::vector<std::vector<std::size_t>> out(nodes);
  std::vector<std::size_t> indeg(nodes, 0);
  for (const auto& [a, b] : edges) {
    if (a >= limit || b >= limit) continue;
    out[a].push_back(b);
    ++indeg[b];
  }
  std::vector<std::size_t> ready;
  for (std::size_t v = 0; v < limit; ++v)
    if (indeg[v] == 0) ready.push_back(v);
  std::size_t seen = 0;
  while (!ready.empty()) {
    const std::size_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (std::size_t w : out[v])
      if (--indeg[w] == 0) ready.push_back(w);
  }
  return seen == limit;
}

// Nodes: committed transactions [0, C), then aborted attempts. Each object's versions are
// ordered by the commits that installed them (each names the version it replaced). Edges:
// write->write along that order, writer->reader of a version, reader->writer of the next
// version. Committed transactions are serializable iff their graph is acyclic; the history is
// opaque (every read of every attempt consistent with one order) iff the whole graph is.
history_report check_history(const std::vector<record>& committed, const std::vector<record>& aborted,
                             std::size_t objects, const std::vector<tagged>& final_values,
                             const std::vector<u64>& final_versions) {
  history_report rep;
  rep.committed = committed.size();
  rep.aborted = aborted.size();
  std::vector<std::unordered_map<u64, std::size_t>> writer(objects), next(objects);
  std::vector<std::unordered_map<u64, u64>> tag_of(objects);
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (std::size_t c = 0; c < committed.size(); ++c) {
    const record& r = committed[c];
    if (r.committed != 1 || r.n == 0 || r.n > max_ops) {
      rep.problem("transaction " + std::to_string(c) + " has no commit record");
      ++rep.chain_errors;
      continue;
    }
    for (std::uint32_t q = 0; q < r.n; ++q) {
      const rec_entry& e = r.e[q];
      if (!e.written) continue;
      if (e.installed <= e.version) rep.problem("a commit did not advance a version"), ++rep.chain_errors;
      if (!writer[e.id].emplace(e.installed, c).second)
        rep.problem("two commits installed version " + std::to_string(e.installed) + " of object " + std::to_string(e.id)),
            ++rep.chain_errors;
      tag_of[e.id][e.installed] = r.tag;
      if (!next[e.id].emplace(e.version, c).second)
        rep.problem("lost update: two commits replaced version " + std::to_string(e.version) + " of object " +
                    std::to_string(e.id)),
            ++rep.chain_errors;
    }
  }
  for (std::size_t x = 0; x < objects; ++x) {
    u64 last = 0;
    for (const auto& [v, w] : writer[x]) last = std::max(last, v);
    for (const auto& [p, w] : next[x]) {
      if (p != 0 && writer[x].count(p) == 0) rep.problem("a commit replaced a version nobody wrote"), ++rep.chain_errors;
      if (p != 0) edges.emplace_back(writer[x].at(p), w);
    }
    if (final_versions[x] != last) rep.problem("object " + std::to_string(x) + ": final version is not the last commit's"), ++rep.chain_errors;
    const u64 want_tag = last == 0 ? 0 : tag_of[x].at(last);
    for (u64 t : final_values[x].tag)
      if (t != want_tag) rep.problem("object " + std::to_string(x) + ": final data is not the last commit's"), ++rep.chain_errors;
  }
  auto add_reads = [&](const record& r, std::size_t node, bool is_committed) {
    for (std::uint32_t q = 0; q < r.n && q < max_ops; ++q) {
      const rec_entry& e = r.e[q];
      if (!e.read) continue;
      const bool known = e.version == 0 || writer[e.id].count(e.version) != 0;
      const u64 want = e.version == 0 ? 0 : (known ? tag_of[e.id].at(e.version) : ~u64{0});
      if (!known || e.tag != want) {
        (is_committed ? rep.bad_committed_reads : rep.bad_aborted_reads)++;
        rep.problem(std::string(is_committed ? "committed" : "aborted") + " read of object " + std::to_string(e.id) +
                    " at version " + std::to_string(e.version) + (known ? " returned other data" : ": no commit wrote it"));
        continue;
      }
      if (e.version != 0 && writer[e.id].at(e.version) != node) edges.emplace_back(writer[e.id].at(e.version), node);
      const auto it = next[e.id].find(e.version);
      if (it != next[e.id].end() && it->second != node) edges.emplace_back(node, it->second);
    }
  };
  for (std::size_t c = 0; c < committed.size(); ++c) add_reads(committed[c], c, true);
  for (std::size_t a = 0; a < aborted.size(); ++a) add_reads(aborted[a], committed.size() + a, false);
  const std::size_t nodes = committed.size() + aborted.size();
  rep.committed_acyclic = acyclic(nodes, edges, committed.size());
  rep.all_acyclic = acyclic(nodes, edges, nodes);
  return rep;
}

template <mode M, bool PerTile>
void run_history(std::size_t objects, std::size_t txs, unsigned escalate_after = stm::default_escalation,
                 unsigned queue_after = stm::default_queueing) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = racing(ex0);
  stm::heap<tagged, M> heap(objects, ex);
  buffer<record> committed(txs, ex);
  const std::size_t aborted_cap = 4 * txs;
  buffer<record> aborted(aborted_cap, ex);
  {
    const std::vector<record> blank(txs, record{});
    committed.copy_from_host(blank.data(), txs);
  }
  auto ctr = counters(2, ex);
  const history_ops<M> ops{heap.ref(), committed.data(), aborted.data(), ctr.data(), aborted_cap, escalate_after, queue_after};
  if constexpr (PerTile) {
    launch<4>(ex, txs, simple_body<history_tile_body<M>>{{ops}});
  } else {
    launch<8>(ex, (txs + 7) / 8, simple_body<history_thread_body<M>>{{ops, txs}});
  }
  const auto c = ctr.to_vector();
  const std::vector<record> com = committed.to_vector();
  std::vector<record> ab = aborted.to_vector();
  ab.resize(std::min<std::size_t>(aborted_cap, c[0]));
  const auto rep = check_history(com, ab, objects, heap.to_vector(), heap.versions());
  std::printf("[history %s %s] objects=%zu committed=%zu aborted attempts=%llu (logged %zu) serial=%llu queued=%llu "
              "torn-live=%llu bad committed reads=%zu bad aborted reads=%zu serializable=%d opaque=%d\n",
              std::string(stm::to_string(M)).c_str(), PerTile ? "tile" : "thread", objects, rep.committed, c[0],
              rep.aborted, static_cast<ull>(heap.serial_escalations()), static_cast<ull>(heap.queued_retries()), c[1],
              rep.bad_committed_reads,
              rep.bad_aborted_reads, rep.committed_acyclic, rep.all_acyclic);
  EXPECT_EQ(rep.chain_errors, 0u) << rep.first_problem;
  EXPECT_EQ(rep.bad_committed_reads, 0u) << rep.first_problem;
  EXPECT_TRUE(rep.committed_acyclic) << "committed transactions are not serializable";
  if (M == mode::opaque) {
    EXPECT_EQ(c[1], 0u) << "a live transaction read a torn object";
    EXPECT_EQ(rep.bad_aborted_reads, 0u) << rep.first_problem;
    EXPECT_TRUE(rep.all_acyclic) << "opacity: the reads of aborted attempts fit no serial order";
  }
}

std::size_t history_txs(const execution& ex, double host_count) { return on_gpu(ex) ? 200000 : scaled(host_count, 200); }

TEST(StmHistory, OpaqueThreadsAreOpaque) {
  WARPKV_TEST_EXECUTION(ex);
  run_history<mode::opaque, false>(8, history_txs(ex, 6000));
  run_history<mode::opaque, false>(256, history_txs(ex, 6000));
  run_history<mode::opaque, false>(8, history_txs(ex, 3000), 2);  // queueing after 1, escalating after 2 attempts
  run_history<mode::opaque, false>(8, history_txs(ex, 3000), 0, 1);  // contention queues alone
}
TEST(StmHistory, OpaqueTilesAreOpaque) {
  WARPKV_TEST_EXECUTION(ex);
  run_history<mode::opaque, true>(8, history_txs(ex, 1500));
  run_history<mode::opaque, true>(8, history_txs(ex, 600), 2);
}
TEST(StmHistory, BaselineCommitsAreSerializable) {
  WARPKV_TEST_EXECUTION(ex);
  run_history<mode::baseline, false>(8, history_txs(ex, 6000));
  run_history<mode::baseline, true>(16, history_txs(ex, 1000));
}

// ---- 4. zombies: two objects that are always equal ------------------------------------------

template <mode M>
struct zombie_ops {
  stm::heap_ref<wide, M> heap;  // pairs (2p, 2p + 1), every word of both always equal
  unsigned ops;
  ull* stats;  // [0] live inconsistent, [1] committed inconsistent, [2] writer commits, [3] zombie loops cut

  template <class Tx>
  WARPKV_HD void run(Tx& tx, u64 stream, bool leader) const {
    const std::size_t pairs = heap.size() / 2;
    ull live_bad = 0, committed_bad = 0, writes = 0, cut = 0;
    for (unsigned k = 0; k < ops; ++k) {
      const u64 r = mix(stream * 7919u + k);
      const std::size_t p = static_cast<std::size_t>(r % pairs);
      if ((r >> 32) % 2 == 0) {
        const tx_status s = stm::atomically(tx, [&](auto& x) {
          wide a{};
          if (!x.read(2 * p, a)) return;
          stall(r >> 3);
          wide b = a;
          for (u64& w : b.w) w = a.w[0] + 1;
          x.write(2 * p, b);
          x.write(2 * p + 1, b);
        });
        writes += s == tx_status::committed;
      } else {
        bool bad = false;
        const tx_status s = stm::atomically(tx, [&](auto& x) {
          bad = false;
          wide a{}, b{};
          if (!x.read(2 * p, a)) return;
          stall(r >> 5);
          if (!x.read(2 * p + 1, b)) return;
          // The loop bound comes from the invariant a == b. b was read after a, so a zombie sees
          // b newer than a and this loop runs ~2^64 steps (the test cuts it and counts it).
          unsigned steps = 0;
          for (u64 v = b.w[0]; v != a.w[0]; ++v)
            if (++steps > 64) {
              ++cut;
              break;
            }
          for (int i = 0; i < 8; ++i) bad = bad || a.w[i] != a.w[0] || b.w[i] != a.w[0];
          if (bad) ++live_bad;
        });
        if (s == tx_status::committed && bad) ++committed_bad;
      }
    }
    if (leader) {
      count(stats, 0, live_bad);
      count(stats, 1, committed_bad);
      count(stats, 2, writes);
      count(stats, 3, cut);
    }
  }
};

template <mode M>
struct zombie_thread_body {
  zombie_ops<M> ops;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    const u64 id = i * Tile::size() + t.thread_rank();
    stm::transaction<wide, M, 2, 2> tx(ops.heap, id);
    ops.run(tx, id, true);
  }
};

template <mode M>
struct zombie_tile_body {
  zombie_ops<M> ops;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    stm::tile_transaction<Tile, wide, M, 2, 2> tx(t, ops.heap, i);
    ops.run(tx, i, t.thread_rank() == 0);
  }
};

template <mode M, bool PerTile>
void run_zombies(std::size_t pairs) {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = racing(ex0);
  stm::heap<wide, M> heap(2 * pairs, ex);
  auto stats = counters(4, ex);
  const unsigned ops = static_cast<unsigned>(scaled(on_gpu(ex) ? 200 : 150, 20));
  const zombie_ops<M> z{heap.ref(), ops, stats.data()};
  if constexpr (PerTile) {
    launch<8>(ex, on_gpu(ex) ? 4096 : 8, simple_body<zombie_tile_body<M>>{{z}});
  } else {
    launch<8>(ex, on_gpu(ex) ? 4096 : 8, simple_body<zombie_thread_body<M>>{{z}});
  }
  const auto s = stats.to_vector();
  std::printf("[zombie %s %s] pairs=%zu writer commits=%llu inconsistent reads while live=%llu (zombie loops cut %llu), "
              "after commit=%llu\n",
              std::string(stm::to_string(M)).c_str(), PerTile ? "tile" : "thread", pairs, s[2], s[0], s[3], s[1]);
  EXPECT_EQ(s[1], 0u) << "a committed transaction saw the two objects differ";
  if (M == mode::opaque) {
    EXPECT_EQ(s[0], 0u) << "opacity: a live transaction saw the two objects differ";
    EXPECT_EQ(s[3], 0u);
  }
  const auto v = heap.to_vector();
  u64 sum = 0;
  for (std::size_t p = 0; p < pairs; ++p) {
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(v[2 * p].w[i], v[2 * p].w[0]);
      ASSERT_EQ(v[2 * p + 1].w[i], v[2 * p].w[0]);
    }
    sum += v[2 * p].w[0];
  }
  EXPECT_EQ(sum, s[2]) << "every committed writer incremented one pair exactly once";
}

TEST(StmZombie, OpaqueNeverSeesTheInvariantBroken) {
  run_zombies<mode::opaque, false>(2);
  run_zombies<mode::opaque, true>(2);
}
TEST(StmZombie, BaselineCommitsNoZombieButMaySeeOne) {
  run_zombies<mode::baseline, false>(2);
  run_zombies<mode::baseline, true>(2);
}

// ---- 5. many objects per transaction, write-only atomicity, 100% conflict -------------------

template <mode M>
struct mixed_body {
  stm::heap_ref<u64, M> counters64;  // 64 counters
  stm::heap_ref<u64, M> tags8;       // 8 objects always written together
  stm::heap_ref<u64, M> pair;        // x, y: everyone conflicts with everyone
  std::size_t streams;
  unsigned ops;
  ull* stats;  // [0] live torn tag sets, [1] committed torn tag sets, [2] non-committed statuses

  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    const u64 id = i * Tile::size() + t.thread_rank();
    if (id >= streams) return;
    stm::transaction<u64, M, 64, 64> big(counters64, id);
    stm::transaction<u64, M, 8, 8> tx(tags8, id);
    stm::transaction<u64, M, 2, 2> px(pair, id);
    ull live_bad = 0, committed_bad = 0, failed = 0;
    for (unsigned k = 0; k < ops; ++k) {
      const u64 op = (id + k) % 8;
      tx_status s = tx_status::committed;
      if (op == 0) {  // 64 objects, read-modify-write
        s = stm::atomically(big, [](auto& x) {
          for (std::size_t j = 0; j < 64; ++j) {
            x.write(j, x.read(j) + 1);
            if (j % 16 == 0) stall(j);
          }
        });
      } else if (op == 1) {  // 1 object
        s = stm::atomically(big, [&](auto& x) {
          const std::size_t j = (id * 31 + k) % 64;
          x.write(j, x.read(j) + 1);
        });
      } else if (op == 2) {  // write-only: 8 blind writes of one tag
        s = stm::atomically(tx, [&](auto& x) {
          for (std::size_t j = 0; j < 8; ++j) {
            x.write(j, (id << 16) | k);
            if (j == 4) stall(k + 1);
          }
        });
      } else if (op == 3) {  // read-only: the 8 objects are always equal
        bool bad = false;
        s = stm::atomically(tx, [&](auto& x) {
          bad = false;
          u64 first = 0, v = 0;
          for (std::size_t j = 0; j < 8; ++j) {
            if (!x.read(j, v)) return;
            if (j == 3) stall(k);
            if (j == 0) first = v;
            bad = bad || v != first;
          }
          if (bad) ++live_bad;
        });
        if (s == tx_status::committed && bad) ++committed_bad;
      } else {  // 100% conflict: read both, write one (opposite choices) or both
        const int which = static_cast<int>(op % 3);
        s = stm::atomically(px, [&](auto& x) {
          u64 a = 0, b = 0;
          if (!x.read(0, a)) return;
          stall(k);
          if (!x.read(1, b)) return;
          if (which != 1) x.write(0, a + 1);
          if (which != 0) x.write(1, b + 1);
        });
      }
      failed += s != tx_status::committed;
    }
    count(stats, 0, live_bad);
    count(stats, 1, committed_bad);
    count(stats, 2, failed);
  }
};

template <mode M>
void run_mixed() {
  WARPKV_TEST_EXECUTION(ex0);
  const execution ex = racing(ex0);
  stm::heap<u64, M> c64(64, ex), t8(8, ex), pair(2, ex);
  auto stats = counters(3, ex);
  const std::size_t streams = on_gpu(ex) ? 8192 : 64;
  const unsigned ops = static_cast<unsigned>(scaled(on_gpu(ex) ? 64 : 48, 8));
  launch<8>(ex, (streams + 7) / 8, simple_body<mixed_body<M>>{{c64.ref(), t8.ref(), pair.ref(), streams, ops, stats.data()}});
  const auto s = stats.to_vector();
  EXPECT_EQ(s[2], 0u) << "every transaction must commit";
  EXPECT_EQ(s[1], 0u) << "a committed reader saw a partial write-only transaction";
  if (M == mode::opaque) {
    EXPECT_EQ(s[0], 0u) << "opacity: a live reader saw a partial write-only transaction";
  }
  // Expected counts, replayed on the host.
  std::vector<u64> want64(64, 0);
  u64 big = 0, px = 0, py = 0;
  for (u64 id = 0; id < streams; ++id)
    for (unsigned k = 0; k < ops; ++k) {
      const u64 op = (id + k) % 8;
      if (op == 0) ++big;
      if (op == 1) ++want64[(id * 31 + k) % 64];
      if (op >= 4) {
        const int which = static_cast<int>(op % 3);
        px += which != 1;
        py += which != 0;
      }
    }
  const auto v64 = c64.to_vector();
  for (std::size_t j = 0; j < 64; ++j) EXPECT_EQ(v64[j], want64[j] + big) << "counter " << j;
  const auto v8 = t8.to_vector();
  for (std::size_t j = 1; j < 8; ++j) EXPECT_EQ(v8[j], v8[0]) << "write-only transactions were not atomic";
  const auto vp = pair.to_vector();
  EXPECT_EQ(vp[0], px);
  EXPECT_EQ(vp[1], py);
  std::printf("[mixed %s] streams=%zu ops=%u live torn tag sets=%llu\n", std::string(stm::to_string(M)).c_str(), streams,
              ops, s[0]);
}

TEST(StmMixed, OpaqueManyObjectsWriteOnlyAndFullConflict) { run_mixed<mode::opaque>(); }
TEST(StmMixed, BaselineManyObjectsWriteOnlyAndFullConflict) { run_mixed<mode::baseline>(); }

}  // namespace
}  // namespace warpkv::testing
