// cpu::hopscotch_map: the shared typed suite (through a small adapter), plus tests aimed at the
// lock-based hopscotch table's own hazards: host threads racing single-key calls on the same keys
// (checked per key for linearizability), lock-free finds while displacement moves the keys they
// look for, resizes while other threads insert and find, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../common/map_suite.hpp"
// Lock-free finds yield between reading a hop word and its slots (a test seam of the header): the
// races the timestamps guard against then happen often instead of once in a blue moon.
#define WARPKV_CPU_HOPSCOTCH_RACE_PROBE 1
#include "warpkv/cpu/hopscotch_map.hpp"

namespace warpkv::testing {
namespace {

/// The typed suite constructs maps as Map(capacity, config, execution) and sizes its runs by
/// Map::tile_size: a cpu map always runs on host threads, so the execution is not needed.
template <class K, class V>
struct suite_map : cpu::hopscotch_map<K, V> {
  static constexpr int tile_size = 1;
  suite_map(std::size_t capacity, cpu::hopscotch_config cfg, const execution&)
      : cpu::hopscotch_map<K, V>(capacity, with_threads(cfg)) {}
  // Four threads even on a 2-core machine, so that batches interleave.
  static cpu::hopscotch_config with_threads(cpu::hopscotch_config cfg) {
    if (cfg.threads == 0) cfg.threads = 4;
    return cfg;
  }
};

using Maps = ::testing::Types<suite_map<std::uint32_t, std::uint32_t>, suite_map<std::uint64_t, std::uint64_t>,
                              suite_map<std::int32_t, float>, suite_map<std::int64_t, double>>;
INSTANTIATE_TYPED_TEST_SUITE_P(CpuHopscotch, MapSuite, Maps);

using map32 = cpu::hopscotch_map<std::uint32_t, std::uint32_t>;

std::size_t scaled(std::size_t n) {
  return std::max<std::size_t>(64, static_cast<std::size_t>(static_cast<double>(n) * test_scale()));
}

// Threads race single-key calls on a handful of hot keys (and on a wider range); every round is
// one concurrent history that must be linearizable per key.
TEST(CpuHopscotchRaces, SingleKeyCallsOnSameKeysAreLinearizable) {
  constexpr unsigned threads = 4;
  std::uint64_t next_value = 1;
  for (const std::size_t range : {2u, 16u, 1000u}) {
    cpu::hopscotch_config cfg;
    cfg.threads = threads;
    cfg.neighborhood = 8;  // short neighborhoods: displacement and resizes happen along the way
    map32 map(4, cfg);
    std::unordered_map<std::uint32_t, std::uint32_t> state;
    std::mt19937_64 rng(range);
    for (int round = 0; round < 10; ++round) {
      const std::size_t per_thread = scaled(3000);
      const std::size_t n = per_thread * threads;
      std::vector<op> ops(n);
      std::vector<std::uint32_t> keys(n), values(n), out(n);
      std::vector<status> st(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto r = rng() % 100;
        ops[i] = r < 25 ? op::insert : r < 40 ? op::insert_or_assign : r < 65 ? op::erase : op::find;
        keys[i] = make_key<std::uint32_t>(1 + rng() % range);
        values[i] = static_cast<std::uint32_t>(next_value++);
      }
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          for (std::size_t i = t * per_thread; i < (t + 1) * per_thread; ++i) {
            switch (ops[i]) {
              case op::insert: st[i] = map.insert(keys[i], values[i]); break;
              case op::insert_or_assign: st[i] = map.insert_or_assign(keys[i], values[i]); break;
              case op::erase: st[i] = map.erase(keys[i]); break;
              default: st[i] = map.find(keys[i], &out[i]); break;
            }
          }
        });
      }
      for (auto& th : pool) th.join();
      auto [k, v] = map.retrieve_all();
      std::unordered_map<std::uint32_t, std::uint32_t> after;
      for (std::size_t i = 0; i < k.size(); ++i) ASSERT_TRUE(after.emplace(k[i], v[i]).second) << "duplicate key";
      const auto verdict = check_linearizable<std::uint32_t, std::uint32_t>(ops, keys, values, st, out, state, after);
      ASSERT_FALSE(verdict.has_value()) << "range " << range << " round " << round << ": " << *verdict;
      ASSERT_EQ(map.size(), after.size());
      ASSERT_EQ(map.validate(), "");
      state = std::move(after);
      map.reclaim();
    }
  }
}

// Keys whose home bucket is in [first, first + count_buckets) for this map's table, skipping `skip`.
std::vector<std::uint32_t> keys_homed_in(const map32& m, std::size_t first, std::size_t buckets, std::size_t count,
                                         std::uint32_t from = 1) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t k = from; out.size() < count; ++k) {
    const std::size_t b = hash_bits(k, m.seed()) & (m.capacity() - 1);
    if (b >= first && b < first + buckets) out.push_back(k);
  }
  return out;
}

// A crowded cluster: 14 keys homed in 8 neighbouring buckets (neighborhood 8), owned by four threads. Each thread
// toggles its own keys (insert when absent, erase one time in four when present) and looks every
// one of them up before toggling it: only its owner changes a key, so the owner knows whether the
// key is present. The crowding makes nearly every insert hop a free slot back across the other
// threads' keys, so finds (which take no lock) keep running into entries being displaced: they
// must never miss a present key, see an absent one, or return a wrong value. (Each race window is
// a few nanoseconds wide; the race probe and the crowding make them be hit.)
TEST(CpuHopscotchRaces, FindsNeverMissKeysBeingDisplaced) {
  constexpr unsigned threads = 4;
  cpu::hopscotch_config cfg;
  cfg.neighborhood = 8;
  cfg.max_load_factor = 1.0;
  cfg.segment_size = 8;
  const std::size_t capacity = 4096, B = 1024;
  map32 map(capacity, cfg);
  const auto keys = keys_homed_in(map, B, 8, 14);
  const std::size_t steps = scaled(50000);
  std::atomic<std::uint64_t> misses{0}, ghosts{0}, wrong{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::vector<std::uint32_t> mine;
      for (std::size_t i = t; i < keys.size(); i += threads) mine.push_back(keys[i]);
      std::vector<bool> present(mine.size(), false);
      for (std::size_t step = 0; step < steps; ++step) {
        const std::size_t i = rng() % mine.size();
        std::uint32_t v = 0;
        const status s = map.find(mine[i], &v);
        if (present[i] && s != status::found) misses.fetch_add(1, std::memory_order_relaxed);
        if (!present[i] && s != status::not_found) ghosts.fetch_add(1, std::memory_order_relaxed);
        if (present[i] && s == status::found && v != (mine[i] ^ 0x5a5a5a5au)) wrong.fetch_add(1, std::memory_order_relaxed);
        if (!present[i]) {
          present[i] = map.insert(mine[i], mine[i] ^ 0x5a5a5a5au) == status::inserted;
        } else if (rng() % 4 == 0) {
          present[i] = map.erase(mine[i]) != status::erased;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(misses.load(), 0u) << "finds missed present keys";
  EXPECT_EQ(ghosts.load(), 0u) << "finds saw absent keys";
  EXPECT_EQ(wrong.load(), 0u) << "finds returned wrong values";
  EXPECT_EQ(map.rehash_count(), 0u) << "the cluster was dissolved by a resize";
  EXPECT_GT(map.displacement_count(), steps / 1000) << "too few displacements";
  EXPECT_EQ(map.validate(), "");
}

// Threads insert disjoint keys into a tiny map, so resizes happen while other threads insert and
// look up keys that are already in: none may be lost or be missing at any time.
TEST(CpuHopscotchRaces, ResizesUnderLoadLoseNothing) {
  constexpr unsigned writers = 3;
  cpu::hopscotch_config cfg;
  cfg.neighborhood = 8;
  map32 map(1, cfg);
  const std::size_t per_writer = scaled(20000);
  std::vector<std::atomic<std::size_t>> done(writers);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> misses{0};
  const auto key_of = [](unsigned w, std::size_t i) { return make_key<std::uint32_t>(1 + w + writers * i); };
  std::thread reader([&] {
    std::mt19937_64 rng(7);
    while (!stop.load(std::memory_order_relaxed)) {
      const unsigned w = static_cast<unsigned>(rng() % writers);
      const std::size_t have = done[w].load(std::memory_order_acquire);
      if (have == 0) continue;
      const std::uint32_t k = key_of(w, rng() % have);
      std::uint32_t v = 0;
      if (map.find(k, &v) != status::found || v != k + 1) misses.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < writers; ++w) {
    pool.emplace_back([&, w] {
      for (std::size_t i = 0; i < per_writer; ++i) {
        const std::uint32_t k = key_of(w, i);
        if (map.insert(k, k + 1) != status::inserted) misses.fetch_add(1000000, std::memory_order_relaxed);
        done[w].store(i + 1, std::memory_order_release);
      }
    });
  }
  for (auto& t : pool) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(misses.load(), 0u);
  EXPECT_GT(map.rehash_count(), 3u);
  ASSERT_EQ(map.size(), writers * per_writer);
  for (unsigned w = 0; w < writers; ++w)
    for (std::size_t i = 0; i < per_writer; ++i) ASSERT_TRUE(map.contains(key_of(w, i)));
  map.reclaim();
  EXPECT_EQ(map.validate(), "");

  // The bulk path resizes inside a batch, too.
  map32 bulk(1, cfg);
  std::vector<std::uint32_t> k(per_writer), v(per_writer);
  for (std::size_t i = 0; i < per_writer; ++i) k[i] = make_key<std::uint32_t>(i + 1), v[i] = static_cast<std::uint32_t>(i);
  std::vector<op> ops(per_writer, op::insert);
  std::vector<std::uint32_t> out;
  const auto st = bulk.execute(ops, k, v, out);  // execute does not reserve ahead: resizes happen mid-batch
  EXPECT_EQ(std::count(st.begin(), st.end(), status::inserted), static_cast<long>(per_writer));
  EXPECT_GT(bulk.rehash_count(), 0u);
  EXPECT_EQ(bulk.size(), per_writer);
  EXPECT_EQ(bulk.validate(), "");
}

TEST(CpuHopscotchInput, BadArgumentsThrowAndSentinelsAreRefused) {
  const auto make = [](auto edit) {
    cpu::hopscotch_config cfg;
    edit(cfg);
    return map32(16, cfg);
  };
  const auto code_of = [](auto&& f) {
    try {
      f();
    } catch (const warpkv::error& e) {
      return e.code();
    }
    return errc::unsupported;  // "did not throw"
  };
  EXPECT_EQ(code_of([&] { make([](auto& c) { c.neighborhood = 0; }); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { make([](auto& c) { c.neighborhood = 33; }); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { make([](auto& c) { c.segment_size = 3; }); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { make([](auto& c) { c.max_probe = 4; }); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { make([](auto& c) { c.max_load_factor = 0.0; }); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { make([](auto& c) { c.find_retries = -1; }); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { map32 huge(std::size_t{1} << 62); }), errc::out_of_memory);

  map32 map(16);
  const std::uint32_t bad = map.empty_key();
  EXPECT_EQ(map.insert(bad, 1u), status::invalid_key);
  EXPECT_EQ(map.insert_or_assign(bad, 1u), status::invalid_key);
  EXPECT_EQ(map.erase(bad), status::invalid_key);
  std::uint32_t v = 7;
  EXPECT_EQ(map.find(bad, &v), status::invalid_key);
  EXPECT_EQ(v, 7u);
  EXPECT_FALSE(map.contains(bad));
  EXPECT_EQ(map.size(), 0u);

  // Null pointers with n > 0, mismatched spans, and op codes outside warpkv::op.
  EXPECT_EQ(code_of([&] { map.insert(nullptr, nullptr, 3); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { map.find(nullptr, 2, nullptr); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { map.erase(static_cast<const std::uint32_t*>(nullptr), 1); }), errc::invalid_argument);
  const std::vector<std::uint32_t> two{1, 2}, one{1};
  EXPECT_EQ(code_of([&] { map.insert(std::span<const std::uint32_t>(two), std::span<const std::uint32_t>(one)); }),
            errc::invalid_argument);
  EXPECT_EQ(map.insert(static_cast<const std::uint32_t*>(nullptr), nullptr, 0).count[0], 0u);  // n = 0 is fine
  std::vector<op> ops{op::insert, static_cast<op>(42)};
  std::vector<std::uint32_t> out;
  const auto st = map.execute(ops, two, two, out);
  EXPECT_EQ(st[0], status::inserted);
  EXPECT_EQ(st[1], status::invalid_key);
  EXPECT_EQ(map.size(), 1u);

  // Another sentinel: then the default one is an ordinary key.
  map32 other(16, {}, 0u);
  EXPECT_EQ(other.insert(0u, 1u), status::invalid_key);
  EXPECT_EQ(other.insert(0xffffffffu, 5u), status::inserted);
  EXPECT_EQ(other.find(0xffffffffu, &v), status::found);
  EXPECT_EQ(v, 5u);
  EXPECT_EQ(other.validate(), "");
}

// The thread count is honoured, and a single-threaded map gives the same results.
TEST(CpuHopscotchInput, ThreadCountIsConfigurable) {
  for (const unsigned threads : {1u, 3u}) {
    cpu::hopscotch_config cfg;
    cfg.threads = threads;
    map32 map(100, cfg);
    EXPECT_EQ(map.threads(), threads);
    std::vector<std::uint32_t> k(5000), v(5000);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = make_key<std::uint32_t>(i + 1), v[i] = static_cast<std::uint32_t>(i);
    const auto st = map.insert(k, v);
    EXPECT_EQ(std::count(st.begin(), st.end(), status::inserted), 5000);
    std::vector<std::uint32_t> out;
    const auto fs = map.find(k, out);
    for (std::size_t i = 0; i < k.size(); ++i) ASSERT_TRUE(fs[i] == status::found && out[i] == v[i]);
  }
  EXPECT_GE(map32(10).threads(), 1u);
}

}  // namespace
}  // namespace warpkv::testing
