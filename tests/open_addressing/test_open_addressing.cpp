// linear_map and quadratic_map: the shared typed suite, plus tests aimed at open addressing's
// own hazards: tombstones (cleanup keeps every live key, the automatic threshold, churn that
// must not grow the table without bound, tombstones never reused), probe sequences that cover
// the table and wrap around its end, full probe sequences inside the device ref, and growth.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "../common/kernel_budget.hpp"
#include "../common/linearizability.hpp"
#include "../common/map_suite.hpp"
#include "../common/ref_checks.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/open_addressing/linear_map.hpp"
#include "warpkv/open_addressing/quadratic_map.hpp"

namespace warpkv::testing {
namespace {

// u32 with one-lane tiles: the insert-only batches' fast inserts (weak reads, a thread per op),
// by default with 4 slots per lane (32-byte windows read 16 bytes at a time); the fourth template
// argument names the slots per lane.
using Maps = ::testing::Types<linear_map<std::uint32_t, std::uint32_t, 4>, linear_map<std::uint32_t, std::uint32_t, 1>,
                              linear_map<std::uint32_t, std::uint32_t, 1, 1>, linear_map<std::uint64_t, std::uint64_t, 1>,
                              linear_map<std::int32_t, float, 8>, linear_map<std::uint32_t, std::uint32_t, 2, 2>,
                              quadratic_map<std::uint32_t, std::uint32_t, 4>, quadratic_map<std::uint32_t, std::uint32_t, 1>,
                              quadratic_map<std::uint32_t, std::uint32_t, 1, 1>, quadratic_map<std::uint64_t, double, 2>>;
INSTANTIATE_TYPED_TEST_SUITE_P(OpenAddressing, MapSuite, Maps);

using lin32 = linear_map<std::uint32_t, std::uint32_t, 4>;
using quad32 = quadratic_map<std::uint32_t, std::uint32_t, 4>;

// The open-addressing tests below run for both probing schemes.
template <class Map>
class OpenAddressingMap : public ::testing::Test {};
using Both = ::testing::Types<lin32, quad32, linear_map<std::uint32_t, std::uint32_t, 1>,
                              quadratic_map<std::uint32_t, std::uint32_t, 1>, linear_map<std::uint32_t, std::uint32_t, 1, 1>,
                              quadratic_map<std::uint32_t, std::uint32_t, 1, 1>, quadratic_map<std::uint32_t, std::uint32_t, 2, 2>>;
TYPED_TEST_SUITE(OpenAddressingMap, Both);

std::vector<std::uint32_t> iota_keys(std::size_t n, std::size_t from = 1) {
  std::vector<std::uint32_t> k(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = make_key<std::uint32_t>(from + i);
  return k;
}

// Keys whose home window starts at slot `first_slot` in this map's current table.
template <class Map>
std::vector<std::uint32_t> keys_homed_at(const Map& m, std::size_t first_slot, std::size_t count) {
  return keys_where([r = m.ref(), first_slot](std::uint32_t k) { return r.home(k) == first_slot; }, count);
}

open_addressing_config full_table_config() {
  open_addressing_config cfg;
  cfg.max_load_factor = 1.0;
  return cfg;
}

// Every probing policy must visit each window exactly once in its first capacity/W windows,
// from every home and for every window width; quadratic's triangular steps included.
TEST(OpenAddressingProbing, SequencesVisitEveryWindowOnce) {
  auto check = [](auto policy, auto width) {
    using P = decltype(policy);
    constexpr int W = decltype(width)::value;
    for (std::size_t cap : {64u, 128u, 1024u, 4096u}) {
      for (std::uint64_t h : {0ull, 5ull, 63ull, 0x9e3779b97f4a7c15ull}) {
        detail::probe_sequence<P, W> seq(h, cap - 1);
        std::vector<int> seen(cap / W, 0);
        for (std::size_t j = 0; j < cap / W; ++j, seq.next()) {
          ASSERT_EQ(seq.window() % W, 0u);
          ++seen[seq.window() / W];
        }
        for (int s : seen) ASSERT_EQ(s, 1) << P::name << " W=" << W << " cap=" << cap;
      }
    }
  };
  check(linear_probing{}, std::integral_constant<int, 1>{});
  check(linear_probing{}, std::integral_constant<int, 4>{});
  check(quadratic_probing{}, std::integral_constant<int, 1>{});
  check(quadratic_probing{}, std::integral_constant<int, 2>{});
  check(quadratic_probing{}, std::integral_constant<int, 8>{});
  check(quadratic_probing{}, std::integral_constant<int, 32>{});
}

// With L slots per lane, a window's probe order (probe_slot) is each of its W slots once, slot s
// of every lane before slot s+1 of any, and lane r's first slot is r*L.
TEST(OpenAddressingProbing, WindowsOfSeveralSlotsPerLaneVisitEverySlotOnce) {
  auto check = [](auto width, auto per_lane) {
    constexpr int W = decltype(width)::value;
    constexpr int L = decltype(per_lane)::value;
    detail::probe_sequence<quadratic_probing, W, L> seq(0x9e3779b97f4a7c15ull, 1023);
    for (int j = 0; j < 8; ++j, seq.next()) {
      std::vector<int> seen(W, 0);
      for (unsigned r = 0; r < static_cast<unsigned>(W); ++r) {
        const std::size_t s = seq.probe_slot(r);
        ASSERT_GE(s, seq.window());
        ASSERT_LT(s, seq.window() + W);
        ++seen[s - seq.window()];
        ASSERT_EQ(s, seq.slot(r % (W / L)) + r / (W / L)) << "W=" << W << " L=" << L;
      }
      for (int c : seen) ASSERT_EQ(c, 1) << "W=" << W << " L=" << L;
      for (unsigned lane = 0; lane < static_cast<unsigned>(W / L); ++lane) ASSERT_EQ(seq.slot(lane), seq.window() + lane * L);
    }
  };
  check(std::integral_constant<int, 4>{}, std::integral_constant<int, 4>{});
  check(std::integral_constant<int, 4>{}, std::integral_constant<int, 2>{});
  check(std::integral_constant<int, 16>{}, std::integral_constant<int, 4>{});
  check(std::integral_constant<int, 2>{}, std::integral_constant<int, 1>{});
}

// A table filled to its last slot: every key homed at the same window, so only a probe sequence
// that covers the whole table places them all. No growth may happen until one key more.
TYPED_TEST(OpenAddressingMap, ProbingFillsEverySlotOfTheTable) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(64, full_table_config(), ex);
  ASSERT_EQ(map.capacity(), 64u);
  const auto keys = keys_homed_at(map, 8, 64);
  std::vector<std::uint32_t> values(keys.begin(), keys.end());
  for (auto s : map.insert(keys, values)) ASSERT_EQ(s, status::inserted);
  EXPECT_EQ(map.rehash_count(), 0u);
  EXPECT_EQ(map.size(), 64u);
  ASSERT_EQ(map.validate(), "");
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(out[i], values[i]);
  for (auto s : fs) ASSERT_EQ(s, status::found);
  // One more key does not fit: the map makes room first and keeps everything.
  const std::vector<std::uint32_t> extra{keys_homed_at(map, 8, 65).back()};
  EXPECT_EQ(map.insert(extra, extra)[0], status::inserted);
  EXPECT_GT(map.capacity(), 64u);
  EXPECT_EQ(map.size(), 65u);
  ASSERT_EQ(map.validate(), "");
}

// Inside the device ref nothing grows: inserts past the last free slot report full and leave
// the table unchanged; the bulk API is what turns full into growth.
TYPED_TEST(OpenAddressingMap, RefReportsFullWhenProbeSequenceIsExhausted) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(64, full_table_config(), ex);
  const std::size_t n = 100;
  const auto keys = iota_keys(n);
  const auto [summary, statuses] = insert_through_ref(map, keys, ex);
  EXPECT_EQ(summary[status::inserted], 64u);
  EXPECT_EQ(summary[status::full], n - 64);
  // Exactly the keys reported inserted are there (size() counts bulk calls only, so no validate()).
  expect_found_exactly_inserted(map, keys, statuses);
}

// Homes in the last window: probing runs past the end of the table and continues at slot 0.
TYPED_TEST(OpenAddressingMap, ProbingWrapsAroundTheEnd) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(256, full_table_config(), ex);
  const std::size_t cap = map.capacity();
  const auto keys = keys_homed_at(map, cap - 4, 40);
  std::vector<std::uint32_t> values(keys.size(), 5);
  for (auto s : map.insert(keys, values)) ASSERT_EQ(s, status::inserted);
  ASSERT_EQ(map.capacity(), cap) << "test needs the table not to grow";
  ASSERT_EQ(map.validate(), "");
  const auto half = std::vector<std::uint32_t>(keys.begin(), keys.begin() + 20);
  for (auto s : map.erase(half)) ASSERT_EQ(s, status::erased);
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(fs[i], i < 20 ? status::not_found : status::found);
  EXPECT_EQ(map.tombstones(), 20u);
  ASSERT_EQ(map.validate(), "");
}

// cleanup() drops every tombstone and keeps every live key with its latest value.
TYPED_TEST(OpenAddressingMap, CleanupKeepsEveryLiveKey) {
  WARPKV_TEST_EXECUTION(ex);
  open_addressing_config cfg;
  cfg.tombstone_threshold = 1.0;  // no automatic cleanup: this test asks for it
  TypeParam map(4000, cfg, ex);
  const std::size_t n = 3000;
  const auto keys = iota_keys(n);
  std::vector<std::uint32_t> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);
  map.insert(keys, values);
  std::vector<std::uint32_t> gone, updated, newer;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) gone.push_back(keys[i]);
    else if (i % 3 == 1) updated.push_back(keys[i]), newer.push_back(static_cast<std::uint32_t>(i + 1000000));
  }
  for (auto s : map.erase(gone)) ASSERT_EQ(s, status::erased);
  for (auto s : map.insert_or_assign(updated, newer)) ASSERT_EQ(s, status::assigned);
  const std::size_t capacity = map.capacity();
  EXPECT_EQ(map.tombstones(), gone.size());
  EXPECT_EQ(map.cleanup_count(), 0u);
  ASSERT_EQ(map.validate(), "");
  map.cleanup();
  EXPECT_EQ(map.tombstones(), 0u);
  EXPECT_EQ(map.cleanup_count(), 1u);
  EXPECT_EQ(map.capacity(), capacity);
  EXPECT_EQ(map.size(), n - gone.size());
  ASSERT_EQ(map.validate(), "");
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) {
      ASSERT_EQ(fs[i], status::not_found);
    } else {
      ASSERT_EQ(fs[i], status::found);
      ASSERT_EQ(out[i], i % 3 == 1 ? static_cast<std::uint32_t>(i + 1000000) : values[i]);
    }
  }
  map.cleanup();  // nothing to drop: no rebuild
  EXPECT_EQ(map.cleanup_count(), 1u);
}

// The map cleans up by itself once a batch leaves more tombstones than the threshold.
TYPED_TEST(OpenAddressingMap, AutomaticCleanupAtThreshold) {
  WARPKV_TEST_EXECUTION(ex);
  open_addressing_config cfg;
  cfg.tombstone_threshold = 0.1;
  TypeParam map(2000, cfg, ex);
  const std::size_t cap = map.capacity();
  const auto keys = iota_keys(1500);
  map.insert(keys, keys);
  const std::size_t below = static_cast<std::size_t>(0.1 * static_cast<double>(cap));  // exactly at: not past
  map.erase(std::span<const std::uint32_t>(keys).first(below));
  EXPECT_EQ(map.tombstones(), below);
  EXPECT_EQ(map.cleanup_count(), 0u);
  ASSERT_EQ(map.validate(), "");
  map.erase(std::span<const std::uint32_t>(keys).subspan(below, 1));
  EXPECT_EQ(map.tombstones(), 0u);
  EXPECT_EQ(map.cleanup_count(), 1u);
  EXPECT_EQ(map.capacity(), cap);
  EXPECT_EQ(map.size(), keys.size() - below - 1);
  ASSERT_EQ(map.validate(), "");
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(fs[i], i <= below ? status::not_found : status::found);
}

// Insert/erase churn over a few hot keys: each re-insert takes a fresh slot (tombstones are not
// reused while a batch runs), yet across many batches the capacity settles and every batch stays
// linearizable per key.
TYPED_TEST(OpenAddressingMap, EraseHeavyChurnNeverGrowsWithoutBound) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(64, {}, ex);
  std::mt19937_64 rng(7);
  std::unordered_map<std::uint32_t, std::uint32_t> state;
  const std::size_t n = std::max<std::size_t>(200, static_cast<std::size_t>(2000 * test_scale()));
  const int batches = 30;
  std::uint32_t next_value = 1;
  for (int b = 0; b < batches; ++b) {
    const std::size_t range = b % 2 == 0 ? 8 : 300;  // hot keys, then a wider churn
    std::vector<op> ops(n);
    std::vector<std::uint32_t> keys(n), values(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = rng() % 100;
      ops[i] = r < 45 ? (rng() % 2 ? op::insert : op::insert_or_assign) : r < 90 ? op::erase : op::find;
      keys[i] = make_key<std::uint32_t>(1 + rng() % range);
      values[i] = next_value++;
    }
    const auto problem = execute_and_check(map, ops, keys, values, state);
    ASSERT_FALSE(problem.has_value()) << "batch " << b << ": " << *problem;
    ASSERT_LE(map.size(), 300u);
    // The table is sized by one batch's worth of inserts at most, never by the history.
    ASSERT_LE(map.capacity(), detail::round_capacity(2 * n)) << "batch " << b;
  }
  EXPECT_LE(static_cast<double>(map.tombstones()), 0.25 * static_cast<double>(map.capacity()));
}

// Many tiles insert, upsert and erase one key at once, with its old slot a tombstone: exactly the
// right number of inserts win, and the table never holds the key twice.
TYPED_TEST(OpenAddressingMap, ConcurrentInsertsOfOneKeyOverATombstone) {
  WARPKV_TEST_EXECUTION(ex);
  open_addressing_config cfg;
  cfg.tombstone_threshold = 1.0;
  TypeParam map(1000, cfg, ex);
  const auto filler = iota_keys(300, 100);
  map.insert(filler, filler);
  const std::uint32_t key = make_key<std::uint32_t>(1);
  for (int round = 0; round < 5; ++round) {
    const std::vector<std::uint32_t> one{key};
    map.insert(one, one);
    map.erase(one);  // the key's first slot is now a tombstone
    const std::size_t n = 400;
    std::vector<op> ops(n);
    std::vector<std::uint32_t> keys(n, key), values(n);
    for (std::size_t i = 0; i < n; ++i) {
      ops[i] = round < 2 ? (i % 2 ? op::insert : op::insert_or_assign) : (i % 3 == 0 ? op::erase : op::insert);
      values[i] = static_cast<std::uint32_t>(round * 1000 + i + 1);
    }
    std::vector<std::uint32_t> out;
    const auto st = map.execute(ops, keys, values, out);
    if (round < 2) {
      EXPECT_EQ(std::count(st.begin(), st.end(), status::inserted), 1);
    }
    auto [k, v] = map.retrieve_all();
    EXPECT_LE(std::count(k.begin(), k.end(), key), 1);
    // before: the fillers (the key itself was erased above); the checker also requires keys
    // the batch did not touch to be unchanged.
    std::unordered_map<std::uint32_t, std::uint32_t> before, after;
    for (const auto f : filler) before.emplace(f, f);
    for (std::size_t i = 0; i < k.size(); ++i) after.emplace(k[i], v[i]);
    const auto verdict = check_linearizable<std::uint32_t, std::uint32_t>(ops, keys, values, st, out, before, after);
    ASSERT_FALSE(verdict.has_value()) << *verdict;
    ASSERT_EQ(map.validate(), "");
    if (after.count(key)) map.erase(std::vector<std::uint32_t>{key});
  }
}

// A probe limit of two windows: through the ref, exactly the 8 slots of the first two windows of
// a crowded home take keys and the rest is full; the bulk API re-seeds and grows until every key
// fits within the limit.
TYPED_TEST(OpenAddressingMap, ProbeLimitBoundsEveryKey) {
  WARPKV_TEST_EXECUTION(ex);
  open_addressing_config cfg;
  cfg.max_probe = 8;
  TypeParam map(1000, cfg, ex);
  const auto keys = keys_homed_at(map, 16, 60);
  const auto summary = insert_through_ref(map, keys, ex).first;
  EXPECT_EQ(summary[status::inserted], 8u);
  EXPECT_EQ(summary[status::full], keys.size() - 8);
  map.clear();
  const std::size_t capacity = map.capacity();
  for (auto s : map.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
  EXPECT_GT(map.rehash_count(), 0u);
  EXPECT_GE(map.capacity(), capacity);
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(fs[i], status::found);
    ASSERT_EQ(out[i], keys[i]);
  }
  ASSERT_EQ(map.validate(), "");  // checks the limit for every stored key
}

// The fast insert (weak probe reads: the bulk API's insert-only batches with one-lane windows)
// stops where the complete one does: at the probe limit it reports full and writes nothing, so
// exactly the first max_probe slots of a crowded home take keys.
TYPED_TEST(OpenAddressingMap, FastInsertReportsFullAtTheProbeLimit) {
  if constexpr (detail::has_fast_bulk_inserts<typename TypeParam::ref_type>) {
    WARPKV_TEST_EXECUTION(ex);
    open_addressing_config cfg;
    cfg.max_probe = 8;
    TypeParam map(1000, cfg, ex);
    const auto keys = keys_homed_at(map, 16, 60);
    const auto [summary, statuses] = insert_through_ref<detail::pass::fast>(map, keys, ex);
    EXPECT_EQ(summary[status::inserted], 8u);
    EXPECT_EQ(summary[status::full], keys.size() - 8);
    expect_found_exactly_inserted(map, keys, statuses);
  } else {
    GTEST_SKIP() << "no fast inserts at this window width";
  }
}

// Insert-only batches (one op per tile, the bulk path's hot kernel; with one-lane windows the
// fast inserts' weak reads). Crowded homes (a few windows
// shared by many keys), a table holding tombstones, and every key three times in one shuffled
// batch: present keys, erased ones and new ones, so inserts of different keys race for the same
// slots and inserts of one key race each other. Each key ends up stored once, exactly one of an absent
// key's inserts reports inserted, and the per-key linearizability checker accepts the batch
// (insert and insert_or_assign, several seeds).
TYPED_TEST(OpenAddressingMap, UniformInsertsOverTombstonesStoreEachKeyOnce) {
  WARPKV_TEST_EXECUTION(ex);
  for (const bool assign : {false, true}) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      open_addressing_config cfg;
      cfg.tombstone_threshold = 1.0;  // keep the tombstones through the batch
      TypeParam map(2048, cfg, ex);
      std::vector<std::uint32_t> keys;
      for (std::size_t home = 0; home < 6; ++home) {
        const auto h = keys_homed_at(map, 64 * home, 40);
        keys.insert(keys.end(), h.begin(), h.end());
      }
      const std::size_t cap = map.capacity();
      // Keys 0..119 go in; the even ones of them are erased (tombstones in the crowded windows).
      const std::vector<std::uint32_t> first(keys.begin(), keys.begin() + 120);
      std::vector<std::uint32_t> v1(first.size());
      for (std::size_t i = 0; i < first.size(); ++i) v1[i] = static_cast<std::uint32_t>(i + 1);
      for (auto s : map.insert(first, v1)) ASSERT_EQ(s, status::inserted);
      std::vector<std::uint32_t> evens;
      for (std::size_t i = 0; i < first.size(); i += 2) evens.push_back(first[i]);
      for (auto s : map.erase(evens)) ASSERT_EQ(s, status::erased);
      ASSERT_GT(map.tombstones(), 0u);
      std::unordered_map<std::uint32_t, std::uint32_t> before;
      {
        auto [k, v] = map.retrieve_all();
        for (std::size_t i = 0; i < k.size(); ++i) before.emplace(k[i], v[i]);
      }
      std::vector<std::uint32_t> bk, bv;
      for (std::size_t copy = 0; copy < 3; ++copy)
        for (std::size_t i = 0; i < keys.size(); ++i)
          bk.push_back(keys[i]), bv.push_back(static_cast<std::uint32_t>(1000 * (copy + 1) + i));
      std::mt19937_64 rng(seed);
      std::vector<std::size_t> order(bk.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<std::uint32_t> k2, v2;
      for (std::size_t i : order) k2.push_back(bk[i]), v2.push_back(bv[i]);
      const auto st = assign ? map.insert_or_assign(k2, v2) : map.insert(k2, v2);
      ASSERT_EQ(map.capacity(), cap) << "the test wants one launch, not growth";
      std::optional<std::string> dup;
      const auto after = contents_of(map, dup);
      ASSERT_FALSE(dup.has_value()) << *dup;
      ASSERT_EQ(after.size(), keys.size());
      std::unordered_map<std::uint32_t, int> inserted;
      for (std::size_t i = 0; i < st.size(); ++i)
        if (st[i] == status::inserted) ++inserted[k2[i]];
      ASSERT_EQ(inserted.size(), keys.size() - before.size());
      for (const auto& [key, n] : inserted) {
        ASSERT_EQ(n, 1) << "key " << key;
        ASSERT_EQ(before.count(key), 0u);
      }
      const std::vector<op> ops(k2.size(), assign ? op::insert_or_assign : op::insert);
      const std::vector<std::uint32_t> none;
      const auto verdict = check_linearizable<std::uint32_t, std::uint32_t>(ops, k2, v2, st, none, before, after);
      ASSERT_FALSE(verdict.has_value()) << *verdict;
      ASSERT_EQ(map.validate(), "");
    }
  }
}

// The one-lane fast insert's launch shape (the ref's fast_insert_launch: blocks of 256, two
// operations a thread) reaches the kernel body through every wrapper that runs it: the bulk
// insert's first launch, the mixed batch's fast write pass; the complete pass, the finds and the
// erases keep the launcher's default. A wrapper that drops the trait fails here, not in a timing.
TEST(OpenAddressingKernels, FastInsertLaunchShapeReachesItsKernels) {
  using R = linear_map<std::uint32_t, std::uint32_t, 1>::ref_type;
  using K = std::uint32_t;
  using fast = detail::insert_op<R, K, K, detail::pass::fast>;
  using first = detail::tile_op_body<1, detail::handing_back_op<fast>>;
  using mixed_fast =
      detail::tile_op_body<1, detail::listed_op<detail::mixed_insert_op<R, K, K, detail::pass::fast>, false, true>>;
  using complete = detail::tile_op_body<1, detail::marked_op<detail::insert_op<R, K, K, detail::pass::complete>>>;
  using finds = detail::tile_op_body<1, detail::find_op<R, K, K>>;
  static_assert(first::thread_per_item && first::block_threads == 256 && first::items_per_thread == 2);
  static_assert(mixed_fast::thread_per_item && mixed_fast::block_threads == 256 && mixed_fast::items_per_thread == 2);
  static_assert(complete::block_threads == 0 && complete::items_per_thread == 0);
  static_assert(finds::block_threads == 0 && finds::items_per_thread == 0);
  // wider tiles run a persistent grid, which ignores the shape
  using R4 = linear_map<std::uint32_t, std::uint32_t, 4>::ref_type;
  static_assert(!detail::tile_op_body<4, detail::handing_back_op<detail::insert_op<R4, K, K, detail::pass::fast>>>::thread_per_item);
  SUCCEED();
}

#if WARPKV_HAS_CUDA
// Issue 23's register budget for the hot kernels of both probing schemes (u32 pairs, tiles of 1
// and 4): the find-only, insert-only and erase-only kernels stay at <= 48 registers with no local
// memory (the ref's hot_register_budget sets their launch bounds; without them nvcc 13.0 spilled
// 8-60 B in the inserts, and the finds kept their probe group in a 32-byte stack frame). Figures
// for sm_90 in docs/perf.md (session 11).
template <class Map>
void expect_hot_kernels_within_budget(const char* name) {
  using R = typename Map::ref_type;
  constexpr int T = Map::tile_size;
  const auto find = bulk_kernel_attributes<T, detail::find_op<R, std::uint32_t, std::uint32_t>>();
  // the first launch of an insert batch: the fast insert where the ref has one
  using first_op = std::conditional_t<detail::has_fast_bulk_inserts<R>, first_insert_op<R, std::uint32_t, std::uint32_t>,
                                      detail::insert_op<R, std::uint32_t, std::uint32_t>>;
  const auto insert = bulk_kernel_attributes<T, first_op>();
  const auto erase = bulk_kernel_attributes<T, detail::erase_op<R, std::uint32_t>>();
  for (const auto& [what, a] : {std::pair{"find", find}, std::pair{"insert", insert}, std::pair{"erase", erase}}) {
    EXPECT_LE(a.numRegs, 48) << name << " " << what;
    EXPECT_EQ(a.localSizeBytes, 0u) << name << " " << what;
    std::cout << "[ registers ] " << name << " " << what << " " << a.numRegs << " (local " << a.localSizeBytes << " B)\n";
  }
}

TEST(OpenAddressingKernels, HotPathsKeepTheirRegisterBudget) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::cuda) GTEST_SKIP() << "kernel attributes are read on the GPU";
  expect_hot_kernels_within_budget<linear_map<std::uint32_t, std::uint32_t, 1>>("linear T=1 (L=4)");
  expect_hot_kernels_within_budget<linear_map<std::uint32_t, std::uint32_t, 4>>("linear T=4");
  expect_hot_kernels_within_budget<quadratic_map<std::uint32_t, std::uint32_t, 1>>("quadratic T=1 (L=4)");
  expect_hot_kernels_within_budget<quadratic_map<std::uint32_t, std::uint32_t, 4>>("quadratic T=4");
  expect_hot_kernels_within_budget<linear_map<std::uint32_t, std::uint32_t, 1, 1>>("linear T=1 L=1");
  expect_hot_kernels_within_budget<quadratic_map<std::uint32_t, std::uint32_t, 1, 1>>("quadratic T=1 L=1");
  expect_hot_kernels_within_budget<linear_map<std::uint32_t, std::uint32_t, 2, 2>>("linear T=2 L=2");
}
#endif

TYPED_TEST(OpenAddressingMap, BothSentinelsAreRejected) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(100, {}, ex);
  EXPECT_EQ(map.erased_key(), default_erased_key<std::uint32_t>);
  const std::vector<std::uint32_t> keys{map.empty_key(), map.erased_key(), 7};
  const auto st = map.insert(keys, keys);
  EXPECT_EQ(st[0], status::invalid_key);
  EXPECT_EQ(st[1], status::invalid_key);
  EXPECT_EQ(st[2], status::inserted);
  std::vector<std::uint32_t> out;
  EXPECT_EQ(map.find(keys, out)[1], status::invalid_key);
  EXPECT_EQ(map.erase(keys)[1], status::invalid_key);
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.tombstones(), 1u);
  ASSERT_EQ(map.validate(), "");
  // Custom sentinels: 0 and 1 are reserved instead, max and max-1 become ordinary keys.
  TypeParam custom(100, {}, ex, 0u, 1u);
  const std::vector<std::uint32_t> k2{0u, 1u, 0xffffffffu, 0xfffffffeu};
  const auto s2 = custom.insert(k2, k2);
  EXPECT_EQ(s2[0], status::invalid_key);
  EXPECT_EQ(s2[1], status::invalid_key);
  EXPECT_EQ(s2[2], status::inserted);
  EXPECT_EQ(s2[3], status::inserted);
  ASSERT_EQ(custom.validate(), "");
  EXPECT_THROW(TypeParam(100, {}, ex, 5u, 5u), warpkv::error);
  open_addressing_config bad;
  bad.tombstone_threshold = 0.0;
  EXPECT_THROW(TypeParam(100, bad, ex), warpkv::error);
}

}  // namespace
}  // namespace warpkv::testing
