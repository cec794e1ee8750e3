#pragma once
// The typed test suite every warpkv map runs. A map gets it with one line:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, MapSuite, ::testing::Types<my_map<...>, ...>);
// A map type must offer: Map(capacity_hint, typename Map::config_type, execution),
// the host-span bulk API (insert, insert_or_assign, find, erase, execute), size(),
// capacity(), retrieve_all(), clear(), validate() (empty string when consistent).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "backend.hpp"
#include "linearizability.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/stream_order.hpp"
#include "warpkv/core/fault_injection.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::testing {

template <class V>
V make_value(std::uint64_t id) {
  if constexpr (std::is_floating_point_v<V>) {
    return static_cast<V>(id % (1u << 23)) + static_cast<V>(0.5);  // exact and distinct below 2^23
  } else {
    return static_cast<V>(id);
  }
}

/// Keys 1..range mapped through a fixed odd multiplier so they are spread and never the sentinel.
template <class K>
K make_key(std::uint64_t i) {
  using U = std::make_unsigned_t<K>;
  const U u = static_cast<U>(i * 0x9e3779b1ull + 12345u) & (std::numeric_limits<U>::max() >> 2);
  return static_cast<K>(u);
}

template <class Map>
class MapSuite : public ::testing::Test {
 protected:
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;

  static Map make(std::size_t capacity, const execution& ex, double max_lf = 0.9) {
    typename Map::config_type cfg{};
    cfg.max_load_factor = max_lf;
    return Map(capacity, cfg, ex);
  }
  static std::unordered_map<K, V> contents(const Map& m) {
    auto [keys, values] = m.retrieve_all();
    std::unordered_map<K, V> out;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      EXPECT_TRUE(out.emplace(keys[i], values[i]).second) << "duplicate key " << +keys[i];
    }
    return out;
  }
  // Host tiles of many lanes are emulated by that many threads meeting at barriers: slow on a
  // 2-core CI machine, so wide tiles get proportionally smaller randomized runs there.
  static std::size_t scaled(std::size_t n) {
    const double width = Map::tile_size >= 16 ? 8.0 : Map::tile_size >= 8 ? 3.0 : 1.0;
    return std::max<std::size_t>(16, static_cast<std::size_t>(static_cast<double>(n) * test_scale() / width));
  }
};

TYPED_TEST_SUITE_P(MapSuite);

// Random batches of distinct keys (so every op's result is determined) against std::unordered_map.
TYPED_TEST_P(MapSuite, MatchesSequentialModel) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    std::mt19937_64 rng(seed);
    auto map = TestFixture::make(64, ex);  // small: growth happens along the way
    std::unordered_map<K, V> model;
    std::uint64_t next_value = 1;
    const std::size_t range = TestFixture::scaled(3000);
    for (int round = 0; round < 12; ++round) {
      std::vector<std::uint64_t> ids(range);
      for (std::size_t i = 0; i < range; ++i) ids[i] = i + 1;
      std::shuffle(ids.begin(), ids.end(), rng);
      const std::size_t n = TestFixture::scaled(400 + 40 * round);
      std::vector<op> ops(n);
      std::vector<K> keys(n);
      std::vector<V> values(n);
      for (std::size_t i = 0; i < n; ++i) {
        ops[i] = static_cast<op>(rng() % 5);
        keys[i] = make_key<K>(ids[i]);
        values[i] = make_value<V>(next_value++);
      }
      if (round % 3 == 0) keys[n / 2] = map.empty_key();  // the sentinel is refused, not stored
      std::vector<V> out;
      const auto st = map.execute(ops, keys, values, out);
      for (std::size_t i = 0; i < n; ++i) {
        const K k = keys[i];
        const auto it = model.find(k);
        const bool present = it != model.end();
        status want{};
        if (k == map.empty_key()) {
          want = status::invalid_key;
        } else {
          switch (ops[i]) {
            case op::insert:
              want = present ? status::found : status::inserted;
              if (!present) model.emplace(k, values[i]);
              break;
            case op::insert_or_assign:
              want = present ? status::assigned : status::inserted;
              model[k] = values[i];
              break;
            case op::erase:
              want = present ? status::erased : status::not_found;
              model.erase(k);
              break;
            case op::find:
            case op::contains:
              want = present ? status::found : status::not_found;
              if (present) {
                ASSERT_TRUE(same_bits(out[i], it->second)) << "seed " << seed << " key " << +k;
              }
              break;
          }
        }
        ASSERT_EQ(st[i], want) << "seed " << seed << " round " << round << " op " << to_string(ops[i]) << " key " << +k;
      }
      ASSERT_EQ(map.size(), model.size());
    }
    const auto got = TestFixture::contents(map);
    ASSERT_EQ(got.size(), model.size());
    for (const auto& [k, v] : model) {
      const auto it = got.find(k);
      ASSERT_NE(it, got.end()) << "lost key " << +k;
      ASSERT_TRUE(same_bits(it->second, v));
    }
    ASSERT_EQ(map.validate(), "");
  }
}

// Mixed batches with heavy key overlap on racing tiles; each batch must be linearizable per key.
TYPED_TEST_P(MapSuite, ConcurrentMixedBatchesAreLinearizable) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t ranges[] = {4, 100, 1000, 10000};  // 4 = a few very hot keys
  const int mixes[][3] = {{20, 20, 60}, {40, 40, 20}, {30, 10, 60}};
  std::uint64_t next_value = 1;
  progress note;
  for (std::size_t range : ranges) {
    for (const auto& mix : mixes) {
      std::mt19937_64 rng(range * 131 + static_cast<std::uint64_t>(mix[0]));
      auto map = TestFixture::make(range / 4 + 16, ex);
      std::unordered_map<K, V> state;
      for (int batch = 0; batch < 3; ++batch) {
        // On the GPU 200000 operations per batch, but at most 2500 per key of the range: on a few
        // hot keys that is contention enough, and lock-based maps serialize every write there
        // (a 200000-operation batch on 4 keys took cuckoo_map<u64,u64,T=1> 30 s on the H100).
        const std::size_t n =
            TestFixture::scaled(ex.where == backend::cuda ? std::min<std::size_t>(200000, 2500 * range) : 6000);
        std::vector<op> ops(n);
        std::vector<K> keys(n);
        std::vector<V> values(n);
        for (std::size_t i = 0; i < n; ++i) {
          const int r = static_cast<int>(rng() % 100);
          const bool upsert = rng() % 2 == 0;
          ops[i] = r < mix[0] ? (upsert ? op::insert_or_assign : op::insert) : r < mix[0] + mix[1] ? op::erase : op::find;
          keys[i] = make_key<K>(1 + rng() % range);
          values[i] = make_value<V>(next_value++);
        }
        std::vector<V> out;
        note("range %zu mix %d/%d/%d batch %d: execute %zu ops", range, mix[0], mix[1], mix[2], batch, n);
        const auto st = map.execute(ops, keys, values, out);
        note("  executed; checking (capacity %zu)", static_cast<std::size_t>(map.capacity()));
        const auto after = TestFixture::contents(map);
        const auto verdict = check_linearizable<K, V>(ops, keys, values, st, out, state, after);
        ASSERT_FALSE(verdict.has_value()) << "range " << range << " mix " << mix[0] << "/" << mix[1] << ": " << *verdict;
        ASSERT_EQ(map.size(), after.size());
        ASSERT_EQ(map.validate(), "");
        state = after;
      }
    }
  }
}

TYPED_TEST_P(MapSuite, HighLoadFactorKeepsEveryKey) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  for (double lf : {0.5, 0.8, 0.9, 0.95}) {
    auto map = TestFixture::make(TestFixture::scaled(ex.where == backend::cuda ? (1u << 20) : 12000), ex, lf);
    const std::size_t n = static_cast<std::size_t>(lf * static_cast<double>(map.capacity()));
    std::vector<K> keys(n);
    std::vector<V> values(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = make_key<K>(i + 1), values[i] = make_value<V>(i + 7);
    const auto st = map.insert(keys, values);
    ASSERT_EQ(std::count(st.begin(), st.end(), status::inserted), static_cast<long>(n));
    ASSERT_LE(map.load_factor(), lf + 1e-9);
    std::vector<V> out;
    const auto fs = map.find(keys, out);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(fs[i], status::found) << "lf " << lf;
      ASSERT_TRUE(same_bits(out[i], values[i]));
    }
    // Erase every other key, then look for all of them.
    std::vector<K> half;
    for (std::size_t i = 0; i < n; i += 2) half.push_back(keys[i]);
    const auto es = map.erase(half);
    ASSERT_EQ(std::count(es.begin(), es.end(), status::erased), static_cast<long>(half.size()));
    const auto fs2 = map.find(keys, out);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(fs2[i], i % 2 == 0 ? status::not_found : status::found);
    ASSERT_EQ(map.validate(), "");
  }
}

TYPED_TEST_P(MapSuite, SentinelIsRejected) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  auto map = TestFixture::make(100, ex);
  const K bad = map.empty_key();
  const std::vector<K> keys{make_key<K>(1), bad, make_key<K>(2)};
  const std::vector<V> values{make_value<V>(1), make_value<V>(2), make_value<V>(3)};
  const auto st = map.insert(keys, values);
  EXPECT_EQ(st[0], status::inserted);
  EXPECT_EQ(st[1], status::invalid_key);
  EXPECT_EQ(st[2], status::inserted);
  EXPECT_EQ(map.size(), 2u);
  std::vector<V> out;
  EXPECT_EQ(map.find(keys, out)[1], status::invalid_key);
  EXPECT_EQ(map.erase(keys)[1], status::invalid_key);
  EXPECT_EQ(map.validate(), "");

  typename TypeParam::config_type cfg{};
  cfg.throw_on_invalid_key = true;
  TypeParam strict(100, cfg, ex);
  try {
    strict.insert(keys, values);
    FAIL() << "expected warpkv::error";
  } catch (const warpkv::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_key);
  }
  // Every call honours the setting, reads too (issue 22: find ignored it); a clean batch does not throw.
  try {
    std::vector<V> found;
    strict.find(keys, found);
    FAIL() << "expected warpkv::error from find";
  } catch (const warpkv::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_key);
  }
  {
    const std::vector<K> good{make_key<K>(1), make_key<K>(2)};
    std::vector<V> found;
    const auto fs = strict.find(good, found);  // the throwing insert above ran its valid keys
    EXPECT_EQ(fs[0], status::found);
    EXPECT_EQ(found[0], make_value<V>(1));
  }
  EXPECT_THROW(strict.erase(keys), warpkv::error);
  EXPECT_THROW(TypeParam(100, [] { typename TypeParam::config_type c{}; c.max_load_factor = 1.5; return c; }(), ex),
               warpkv::error);
}

TYPED_TEST_P(MapSuite, GrowsFromTinyCapacityWithoutLosingInserts) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  auto map = TestFixture::make(1, ex);
  const std::size_t n = TestFixture::scaled(20000);
  std::vector<K> keys(n);
  std::vector<V> values(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = make_key<K>(i + 1), values[i] = make_value<V>(i + 3);
  // In chunks, with upserts mixed in, so growth happens between and inside batches.
  for (std::size_t at = 0; at < n; at += n / 5) {
    const std::size_t len = std::min(n / 5, n - at);
    const auto st = map.insert_or_assign(std::span<const K>(keys).subspan(at, len), std::span<const V>(values).subspan(at, len));
    ASSERT_EQ(std::count(st.begin(), st.end(), status::inserted), static_cast<long>(len));
  }
  ASSERT_EQ(map.size(), n);
  std::vector<V> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(fs[i], status::found);
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.find(keys, out)[0], status::not_found);
  ASSERT_EQ(map.validate(), "");
}

// One large batch of heavy churn over a wide key range on a fresh map sized for the range (the
// GLHT paper's "large" experiment): the structure must agree with the statuses. On the H100 the
// paper run (10^7 operations, 10^5 and 10^7 keys, [40,40,20]) left chained_map(pool) lists with
// 2 live keys fewer than its statuses, and in another run more, while every smaller test passed.
TYPED_TEST_P(MapSuite, LargeChurnBatchesStayConsistent) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  const bool gpu = ex.where == backend::cuda;
  const std::size_t range = gpu ? 100000 : 2000;
  const std::size_t n = TestFixture::scaled(gpu ? 4000000 : 8000);
  const int mixes[][3] = {{40, 40, 20}, {20, 20, 60}};
  std::uint64_t next_value = 1;
  for (const auto& mix : mixes) {
    std::mt19937_64 rng(977 + static_cast<std::uint64_t>(mix[0]));
    auto map = TestFixture::make(range, ex, 0.85);
    std::vector<op> ops(n);
    std::vector<K> keys(n);
    std::vector<V> values(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int r = static_cast<int>(rng() % 100);
      ops[i] = r < mix[0] ? (rng() % 2 == 0 ? op::insert_or_assign : op::insert) : r < mix[0] + mix[1] ? op::erase : op::find;
      keys[i] = make_key<K>(1 + rng() % range);
      values[i] = make_value<V>(next_value++);
    }
    std::vector<V> out;
    const auto st = map.execute(ops, keys, values, out);
    // validate() first: it compares the structure with size() without copying out its entries.
    ASSERT_EQ(map.validate(), "") << "mix " << mix[0] << "/" << mix[1];
    const auto after = TestFixture::contents(map);
    ASSERT_EQ(map.size(), after.size());
    const auto verdict = check_linearizable<K, V>(ops, keys, values, st, out, {}, after);
    ASSERT_FALSE(verdict.has_value()) << "mix " << mix[0] << "/" << mix[1] << ": " << *verdict;
  }
}

// Issue 22: a failed reserve/rehash/growth must leave the map exactly as it was and usable (it
// used to free the only table: the next call crashed, on the GPU poisoning the context). Oversized
// requests on every backend, and injected allocation failures at every allocation of a rehash
// and of a batch that grows (maps that allocate through warpkv::buffer).
TYPED_TEST_P(MapSuite, FailedAllocationLeavesTheMapAsItWas) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  auto map = TestFixture::make(64, ex);
  const std::size_t n = TestFixture::scaled(1000);
  std::vector<K> keys(n);
  std::vector<V> values(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = make_key<K>(i + 1), values[i] = make_value<V>(i + 7);
  map.insert(keys, values);
  ASSERT_EQ(map.size(), n);
  auto intact = [&](const char* after) {
    ASSERT_EQ(map.size(), n) << after;
    ASSERT_EQ(map.validate(), "") << after;
    std::vector<V> out;
    const auto st = map.find(keys, out);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(st[i], status::found) << after << ": key " << i;
      ASSERT_EQ(out[i], values[i]) << after << ": key " << i;
    }
    ASSERT_EQ(TestFixture::contents(map).size(), n) << after;
  };
  const std::size_t capacity = map.capacity();
  for (const std::size_t huge : {std::size_t{1} << 40, std::size_t{1} << 36}) {
    try {
      map.reserve(huge);
      ADD_FAILURE() << "reserve(" << huge << ") did not throw";
    } catch (const warpkv::error& e) {
      EXPECT_TRUE(e.code() == errc::out_of_memory || e.code() == errc::vulkan) << e.what();
    }
    intact("a failed reserve");
    EXPECT_THROW(map.rehash(huge), warpkv::error);
    intact("a failed rehash");
  }
  EXPECT_EQ(map.capacity(), capacity);
  // Injected failures: the k-th allocation of a rehash, then of an insert batch that must grow.
  std::vector<K> more(4 * n);
  std::vector<V> more_values(4 * n);
  for (std::size_t i = 0; i < more.size(); ++i) more[i] = make_key<K>(n + i + 1), more_values[i] = make_value<V>(i);
  for (long long k = 0; k < 8; ++k) {
    warpkv::fault_injection::fail_allocation(k);
    try {
      map.rehash(2 * map.capacity());
    } catch (const warpkv::error& e) {
      EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
    }
    const bool fired = !warpkv::fault_injection::allocation_armed();
    warpkv::fault_injection::disarm();
    intact("an injected failure in rehash");
    if (!fired) break;  // the rehash makes fewer allocations than k (or none through warpkv::buffer)
  }
  for (long long k = 0; k < 12; ++k) {
    const std::size_t before = map.size();
    warpkv::fault_injection::fail_allocation(k);
    bool threw = false;
    try {
      map.insert(more, more_values);
    } catch (const warpkv::error& e) {
      threw = true;
      EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
    }
    const bool fired = !warpkv::fault_injection::allocation_armed();
    warpkv::fault_injection::disarm();
    if (!threw) break;  // it succeeded: nothing more to inject into
    ASSERT_EQ(map.size(), before) << "a failed insert batch changed the map (failure at allocation " << k << ")";
    intact("an injected failure in a growing insert");
    if (!fired) break;
  }
}

// Issue 22: a mixed batch into a far-too-small map is sized up front, as insert() is: it used to
// fill the small table, fail, grow and re-run (minutes on the GPU for hopscotch and cuckoo).
TYPED_TEST_P(MapSuite, MixedBatchIntoTinyMapIsSizedUpFront) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  auto map = TestFixture::make(64, ex);
  const std::size_t n = TestFixture::scaled(8000);
  std::mt19937_64 rng(5);
  std::vector<op> ops(n);
  std::vector<K> keys(n);
  std::vector<V> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int r = static_cast<int>(rng() % 10);
    ops[i] = r < 4 ? op::insert : r < 6 ? op::insert_or_assign : r < 8 ? op::find : op::erase;
    keys[i] = make_key<K>(i + 1);  // fresh keys: every insert inserts, every find and erase misses
    values[i] = make_value<V>(i);
  }
  std::vector<V> out;
  const auto st = map.execute(ops, keys, values, out);
  std::size_t inserts = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool ins = ops[i] == op::insert || ops[i] == op::insert_or_assign;
    inserts += ins ? 1 : 0;
    ASSERT_EQ(st[i], ins ? status::inserted : status::not_found) << "op " << i;
  }
  EXPECT_EQ(map.size(), inserts);
  EXPECT_EQ(map.validate(), "");
  if constexpr (requires { map.rehash_count(); }) {
    EXPECT_LE(map.rehash_count(), 2u) << "the batch grew the table round after round instead of once up front";
  }
}

// The stream-ordered API: the async forms give the results of the synchronous calls, queued in
// order on a caller's stream (which is left ordered after the map's work: results are read
// through that stream only), their counts arrive through synchronize() and size(), a call that
// could pass the maximum load factor throws before anything runs (async calls never grow), and a
// sentinel is reported by synchronize() under throw_on_invalid_key.
TYPED_TEST_P(MapSuite, AsyncCallsMatchTheSynchronousOnes) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t n = TestFixture::scaled(4000);
  auto map = TestFixture::make(2 * n, ex);
  if constexpr (!requires { map.synchronize(); }) {
    GTEST_SKIP() << "this map has no async forms";
  } else {
    owned_stream caller(ex);  // the caller's own stream on cuda; the host backend has none
    const execution& cx = caller.exec();
    const stream_arg s = ex.where == backend::cuda ? stream_arg(cx.stream) : stream_arg{};
    std::vector<K> keys(n);
    std::vector<V> values(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = make_key<K>(i + 1), values[i] = make_value<V>(i);
    auto k = buffer<K>::from_host(keys, cx);
    auto v = buffer<V>::from_host(values, cx);
    buffer<status> st1(n, cx), st2(n, cx), st3(n, cx);
    buffer<V> got(n, cx);
    buffer<bool> found(n, cx);
    const std::size_t quarter = n / 4;
    map.insert_async(k.data(), v.data(), n, st1.data(), s);
    map.insert_async(k.data(), v.data(), n / 2, st2.data(), s);  // ordered after the first: all present
    map.erase_async(k.data(), quarter, st3.data(), s);
    map.find_async(k.data(), n, got.data(), nullptr, s);
    map.contains_async(k.data(), n, found.data(), s);
    // Read through the caller's stream only: these copies wait for nothing but that stream.
    const auto a = st1.to_vector(), b = st2.to_vector(), c = st3.to_vector();
    const auto g = got.to_vector();
    std::unique_ptr<bool[]> f(new bool[n]);
    found.copy_to_host(f.get(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(a[i], status::inserted) << i;
      if (i < n / 2) {
        ASSERT_EQ(b[i], status::found) << i;
      }
      if (i < quarter) {
        ASSERT_EQ(c[i], status::erased) << i;
      }
      ASSERT_EQ(static_cast<bool>(f[i]), i >= quarter) << i;
      ASSERT_EQ(g[i], i >= quarter ? values[i] : V{}) << i;
    }
    const batch_summary sum = map.synchronize();
    EXPECT_EQ(sum[status::inserted], n);
    EXPECT_EQ(sum[status::found], n / 2);
    EXPECT_EQ(sum[status::erased], quarter);
    EXPECT_EQ(sum[status::full], 0u);
    EXPECT_EQ(map.size(), n - quarter);
    // A mixed async batch (re-insert the erased quarter, find the rest), then size() alone waits.
    std::vector<op> ops(n);
    for (std::size_t i = 0; i < n; ++i) ops[i] = i < quarter ? op::insert : op::find;
    auto o = buffer<op>::from_host(ops, cx);
    map.execute_async(o.data(), k.data(), v.data(), n, st1.data(), got.data(), s);
    EXPECT_EQ(map.size(), n);
    const auto e = st1.to_vector();
    const auto eg = got.to_vector();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(e[i], i < quarter ? status::inserted : status::found) << i;
      if (i >= quarter) {
        ASSERT_EQ(eg[i], values[i]) << i;
      }
    }
    // The synchronous forms take the caller's stream too.
    map.erase(k.data(), quarter, st3.data(), s);
    EXPECT_EQ(map.size(), n - quarter);
    map.insert(k.data(), v.data(), quarter, st3.data(), s);
    EXPECT_EQ(map.size(), n);
    // No growth: a call that could pass the maximum load factor throws and runs nothing.
    const std::size_t cap = map.capacity();
    std::vector<K> more(cap);
    std::vector<V> mv(cap);
    for (std::size_t i = 0; i < cap; ++i) more[i] = make_key<K>(n + 1 + i), mv[i] = make_value<V>(i);
    auto mk = buffer<K>::from_host(more, ex);
    auto mvb = buffer<V>::from_host(mv, ex);
    try {
      map.insert_async(mk.data(), mvb.data(), cap, nullptr, s);
      FAIL() << "expected warpkv::error(capacity)";
    } catch (const warpkv::error& err) {
      EXPECT_EQ(err.code(), errc::capacity);
    }
    EXPECT_EQ(map.capacity(), cap);
    EXPECT_EQ(map.size(), n);
    EXPECT_EQ(TestFixture::contents(map).size(), n);
    EXPECT_EQ(map.validate(), "");
    // A sentinel: the async call reports it in its statuses; synchronize() throws afterwards.
    typename TypeParam::config_type cfg{};
    cfg.throw_on_invalid_key = true;
    TypeParam strict(64, cfg, ex);
    const std::vector<K> bad{make_key<K>(1), strict.empty_key()};
    const std::vector<V> bv{V{}, V{}};
    auto bk = buffer<K>::from_host(bad, ex);
    auto bvb = buffer<V>::from_host(bv, ex);
    buffer<status> bst(2, ex);
    strict.insert_async(bk.data(), bvb.data(), 2, bst.data());
    try {
      strict.synchronize();
      FAIL() << "expected warpkv::error(invalid_key)";
    } catch (const warpkv::error& err) {
      EXPECT_EQ(err.code(), errc::invalid_key);
    }
    EXPECT_EQ(strict.size(), 1u);
    EXPECT_EQ(bst.to_vector()[1], status::invalid_key);
  }
}

// Issue 23 item 2: a batch whose caller asks for no statuses (the pointer forms with out null)
// still places every key and counts every operation once, when the fast pass hands operations
// back (high load) and when the batch must grow inside itself; keys repeated in the batch count
// once as inserted. The sync and async forms, insert and insert_or_assign.
TYPED_TEST_P(MapSuite, BatchesWithoutStatusesKeepEveryKey) {
  using K = typename TestFixture::K;
  using V = typename TestFixture::V;
  WARPKV_TEST_EXECUTION(ex);
  if constexpr (!requires(TypeParam& m, const K* k, const V* v, status* out) {
                  m.insert(k, v, std::size_t{}, out);
                  m.insert_or_assign(k, v, std::size_t{}, out);
                }) {
    GTEST_SKIP() << "this map has no pointer forms with optional statuses";
  } else {
    const std::size_t cap = TestFixture::scaled(ex.where == backend::cuda ? (1u << 16) : 6000);
    // near the maximum load factor; three times past it (grown before the batch); every slot
    // (a map with no room to spare: what the complete pass cannot place grows inside the batch)
    for (const auto& [fill, max_lf] : {std::pair{0.95, 0.95}, std::pair{3.0, 0.95}, std::pair{1.0, 1.0}}) {
      auto map = TestFixture::make(cap, ex, max_lf);
      const std::size_t n = static_cast<std::size_t>(fill * max_lf * static_cast<double>(map.capacity()));
      std::vector<K> keys;
      std::vector<V> values;
      for (std::size_t i = 0; i < n; ++i) keys.push_back(make_key<K>(i + 1)), values.push_back(make_value<V>(i + 1));
      if (max_lf < 1.0)  // repeats (not in the full map's batch: reserve() would count them and grow it first)
        for (std::size_t i = 0; i < n; i += 5) keys.push_back(make_key<K>(i + 1)), values.push_back(make_value<V>(i + 1));
      const std::size_t dups = keys.size() - n;
      auto k = buffer<K>::from_host(keys, ex);
      auto v = buffer<V>::from_host(values, ex);
      const batch_summary sum = map.insert(k.data(), v.data(), keys.size(), nullptr);
      EXPECT_EQ(sum[status::inserted], n) << "fill " << fill;
      EXPECT_EQ(sum[status::found], dups) << "fill " << fill;
      EXPECT_EQ(sum[status::full], 0u);
      ASSERT_EQ(map.size(), n);
      if (fill > 1.0) {
        EXPECT_GT(map.capacity(), cap) << "the batch grew the map";
      }
      std::vector<V> out;
      const auto fs = map.find(std::span<const K>(keys).first(n), out);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(fs[i], status::found) << i;
        ASSERT_TRUE(same_bits(out[i], values[i])) << i;
      }
      // every key again with new values, insert_or_assign without statuses: all assigned
      std::vector<V> nv(n);
      for (std::size_t i = 0; i < n; ++i) nv[i] = make_value<V>(i + 3);
      auto v2 = buffer<V>::from_host(nv, ex);
      if constexpr (requires(TypeParam& m) { m.release_scratch(); }) {
        map.release_scratch();  // the next batch allocates its list again
        EXPECT_EQ(map.scratch_bytes(), 0u);
      }
      const batch_summary up = map.insert_or_assign(k.data(), v2.data(), n, nullptr);
      EXPECT_EQ(up[status::assigned], n);
      EXPECT_EQ(up[status::inserted], 0u);
      ASSERT_EQ(map.size(), n);
      ASSERT_EQ(map.validate(), "");
    }
    if constexpr (requires(TypeParam& m) { m.synchronize(); }) {
      // async, no statuses, into a map with room for all but at its maximum load factor
      auto map = TestFixture::make(cap, ex, 1.0);
      const std::size_t n = static_cast<std::size_t>(0.95 * static_cast<double>(map.capacity()));
      std::vector<K> keys(n);
      std::vector<V> values(n);
      for (std::size_t i = 0; i < n; ++i) keys[i] = make_key<K>(i + 1), values[i] = make_value<V>(i + 1);
      auto k = buffer<K>::from_host(keys, ex);
      auto v = buffer<V>::from_host(values, ex);
      map.insert_async(k.data(), v.data(), n / 2, nullptr);
      map.insert_async(k.data() + n / 2, v.data() + n / 2, n - n / 2, nullptr);
      const batch_summary sum = map.synchronize();
      EXPECT_EQ(sum[status::inserted], n);
      EXPECT_EQ(sum[status::full], 0u);
      ASSERT_EQ(map.size(), n);
      std::vector<V> out;
      const auto fs = map.find(keys, out);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(fs[i], status::found) << i;
        ASSERT_TRUE(same_bits(out[i], values[i])) << i;
      }
      ASSERT_EQ(map.validate(), "");
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(MapSuite, MatchesSequentialModel, ConcurrentMixedBatchesAreLinearizable,
                            HighLoadFactorKeepsEveryKey, SentinelIsRejected, GrowsFromTinyCapacityWithoutLosingInserts,
                            LargeChurnBatchesStayConsistent, FailedAllocationLeavesTheMapAsItWas,
                            MixedBatchIntoTinyMapIsSizedUpFront, AsyncCallsMatchTheSynchronousOnes,
                            BatchesWithoutStatusesKeepEveryKey);

}  // namespace warpkv::testing
