// hopscotch_map with the bucketized layout (hopscotch_buckets, "H64"; docs/design/hopscotch_buckets.md):
// the shared typed suite with tiles of 1 and 4 lanes, plus the races the design's argument is
// about: many fast inserts of one key, fast against slow inserts of one key, erase and reinsert of
// home residents and external members in one batch, and a fast launch that hands keys over.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <unordered_map>
#include <vector>

#include "../common/hot_keys.hpp"
#include "../common/kernel_budget.hpp"
#include "../common/map_suite.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"

namespace warpkv::testing {
namespace {

template <class K, class V, int T>
using h64 = hopscotch_map<K, V, T, hopscotch_buckets>;

using Maps = ::testing::Types<h64<std::uint32_t, std::uint32_t, 1>, h64<std::uint32_t, std::uint32_t, 4>>;
// The suite also on signed keys and float values with 2-lane tiles (4 words a lane).
using SuiteMaps = ::testing::Types<h64<std::uint32_t, std::uint32_t, 1>, h64<std::uint32_t, std::uint32_t, 4>,
                                   h64<std::int32_t, float, 2>>;
INSTANTIATE_TYPED_TEST_SUITE_P(HopscotchBuckets, MapSuite, SuiteMaps);

template <class Map>
class H64 : public ::testing::Test {};
TYPED_TEST_SUITE(H64, Maps);

// Keys whose home is bucket `bucket` of this map's current table.
template <class Map>
std::vector<std::uint32_t> keys_homed_at(const Map& m, std::size_t bucket, std::size_t count, std::uint64_t from = 1) {
  std::vector<std::uint32_t> out;
  const auto r = m.ref();
  for (std::uint64_t k = from; out.size() < count; ++k)
    if (r.home(static_cast<std::uint32_t>(k)) == bucket) out.push_back(static_cast<std::uint32_t>(k));
  return out;
}

template <class Map>
Map fixed_map(const execution& ex) {
  hopscotch_config cfg;
  cfg.max_load_factor = 1.0;
  return Map(64 * 7, cfg, ex);  // 64 buckets
}

// A fast launch (insert_op with pass::fast) over a host vector of keys (values = keys + 1).
template <class Map>
std::pair<std::vector<status>, batch_summary> fast_launch(const Map& map, const std::vector<std::uint32_t>& keys,
                                                          const execution& ex, bool or_assign = false,
                                                          std::uint32_t value_offset = 1) {
  std::vector<std::uint32_t> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) values[i] = keys[i] + value_offset;
  auto k = buffer<std::uint32_t>::from_host(keys, ex);
  auto v = buffer<std::uint32_t>::from_host(values, ex);
  auto st = buffer<status>(keys.size(), ex);
  using fast = detail::insert_op<typename Map::ref_type, std::uint32_t, std::uint32_t, detail::pass::fast>;
  batch_counters counters(ex);
  const auto counts = launch_batch<Map::tile_size, fast, batch_shape::op_per_tile>(
      ex, keys.size(), fast{map.ref(), k.data(), v.data(), or_assign}, st.data(), counters);
  return {st.to_vector(), counts};
}

// One-lane tiles finish an operation in a few hundred nanoseconds on the host: repeat their races
// so that the lanes meet often.
template <class Map>
constexpr int race_repeats = Map::tile_size == 1 ? 10 : 1;

TYPED_TEST(H64, ReservedKeysAreRefused) {
  WARPKV_TEST_EXECUTION(ex);
  auto map = fixed_map<TypeParam>(ex);
  const auto r = map.ref();
  const std::vector<std::uint32_t> keys{r.empty_key(), r.tomb_key(), r.claimed_key(), 5};
  const std::vector<std::uint32_t> values{1, 2, 3, 4};
  const auto st = map.insert(keys, values);
  EXPECT_EQ(st[0], status::invalid_key);
  EXPECT_EQ(st[1], status::invalid_key);
  EXPECT_EQ(st[2], status::invalid_key);
  EXPECT_EQ(st[3], status::inserted);
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(fs[i], status::invalid_key);
  const auto es = map.erase(keys);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(es[i], status::invalid_key);
  EXPECT_EQ(map.validate(), "");
}

// Many fast inserts of one key in one launch: exactly one stores it (design doc, argument (a)).
TYPED_TEST(H64, ManyFastInsertsOfOneKeyStoreItOnce) {
  WARPKV_TEST_EXECUTION(ex);
  for (int round = 0; round < 20; ++round) {
    auto map = fixed_map<TypeParam>(ex);
    // Some residents first, so the lowest empty slot is not always the first.
    const std::size_t bucket = static_cast<std::size_t>(round) % 64;
    const auto homed = keys_homed_at(map, bucket, 1 + static_cast<std::size_t>(round) % 6);
    const std::vector<std::uint32_t> pre(homed.begin(), homed.end() - 1);
    map.insert(pre, pre);
    // The bulk insert's first launch is the fast pass: every op of this batch meets an empty home slot.
    const std::vector<std::uint32_t> keys(static_cast<std::size_t>(std::max(64.0, 400 * test_scale())), homed.back());
    std::vector<std::uint32_t> values(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) values[i] = static_cast<std::uint32_t>(i + 1);
    const auto st = map.insert(keys, values);
    std::size_t winner = keys.size();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (st[i] == status::inserted) {
        EXPECT_EQ(winner, keys.size()) << "round " << round << ": a second insert of the key won";
        winner = i;
      } else {
        EXPECT_EQ(st[i], status::found) << "round " << round;
      }
    }
    ASSERT_LT(winner, keys.size()) << "round " << round;
    std::vector<std::uint32_t> out;
    EXPECT_EQ(map.find(std::vector<std::uint32_t>{homed.back()}, out)[0], status::found);
    EXPECT_EQ(out[0], values[winner]);
    EXPECT_EQ(map.size(), homed.size());
    ASSERT_EQ(map.validate(), "") << "round " << round;
  }
}

// Fast against slow inserts of one key: the home bucket has one empty slot, and many inserts of
// k race with inserts of other keys homed there, so some inserts of k meet the empty slot (fast
// path) and others a full home (slow path, external placement or a home tomb). One wins; the
// batch is linearizable; the table stays valid (design doc, arguments (b) and (c)).
TYPED_TEST(H64, FastAndSlowInsertsOfOneKeyStoreItOnce) {
  WARPKV_TEST_EXECUTION(ex);
  for (int round = 0; round < 12 * race_repeats<TypeParam>; ++round) {
    auto map = fixed_map<TypeParam>(ex);
    const std::size_t bucket = 63 - static_cast<std::size_t>(round % 12);  // some neighbourhoods wrap
    const auto homed = keys_homed_at(map, bucket, 20);
    const std::vector<std::uint32_t> pre(homed.begin(), homed.begin() + 6);  // 6 of 7 home slots
    map.insert(pre, pre);
    if (round % 2 == 1) map.erase(std::vector<std::uint32_t>{pre[2]});  // and a tomb to reuse
    std::unordered_map<std::uint32_t, std::uint32_t> state;
    {
      auto [k, v] = map.retrieve_all();
      for (std::size_t i = 0; i < k.size(); ++i) state.emplace(k[i], v[i]);
    }
    const std::uint32_t hot = homed[6];
    const std::size_t n = static_cast<std::size_t>(std::max(120.0, 600 * test_scale()));
    std::vector<op> ops(n);
    std::vector<std::uint32_t> keys(n), values(n);
    for (std::size_t i = 0; i < n; ++i) {
      const bool other = i % 3 == 1;
      keys[i] = other ? homed[7 + (i / 3) % 13] : hot;
      ops[i] = (i % 5 == 4) ? op::insert_or_assign : op::insert;
      values[i] = static_cast<std::uint32_t>(1000 + i);
    }
    std::vector<std::uint32_t> out;
    const auto st = map.execute(ops, keys, values, out);
    long wins = 0;
    for (std::size_t i = 0; i < n; ++i) wins += keys[i] == hot && st[i] == status::inserted;
    EXPECT_EQ(wins, 1) << "round " << round;
    auto [k, v] = map.retrieve_all();
    std::unordered_map<std::uint32_t, std::uint32_t> after;
    for (std::size_t i = 0; i < k.size(); ++i) ASSERT_TRUE(after.emplace(k[i], v[i]).second) << "a key is stored twice";
    const auto verdict = check_linearizable<std::uint32_t, std::uint32_t>(ops, keys, values, st, out, state, after);
    ASSERT_FALSE(verdict.has_value()) << "round " << round << ": " << *verdict;
    ASSERT_EQ(map.validate(), "") << "round " << round;
  }
}

// Erase and reinsert of home residents and external members in one batch (20 keys homed at one
// bucket: 7 residents, 13 external members), several batches: linearizable per key, valid after
// each (race_on_keys: inserts and upserts, then erases, finds, inserts and upserts).
TYPED_TEST(H64, EraseAndReinsertOfResidentsAndExternalMembersInOneBatch) {
  WARPKV_TEST_EXECUTION(ex);
  for (int rep = 0; rep < race_repeats<TypeParam>; ++rep) {
    for (std::size_t bucket : {std::size_t{5}, std::size_t{60}}) {
      auto map = fixed_map<TypeParam>(ex);
      const auto keys = keys_homed_at(map, bucket, 20);
      race_on_keys(map, keys, std::max<std::size_t>(400, static_cast<std::size_t>(3000 * test_scale())), 6);
    }
  }
}

// The same with keys homed at two neighbouring buckets (each one's externals land in the other's
// home slots and in shared neighbours).
TYPED_TEST(H64, RacesOnNeighbouringHomes) {
  WARPKV_TEST_EXECUTION(ex);
  for (int rep = 0; rep < race_repeats<TypeParam>; ++rep) {
    auto map = fixed_map<TypeParam>(ex);
    auto keys = keys_homed_at(map, 9, 14);
    const auto more = keys_homed_at(map, 10, 14);
    keys.insert(keys.end(), more.begin(), more.end());
    race_on_keys(map, keys, std::max<std::size_t>(400, static_cast<std::size_t>(3000 * test_scale())), 6);
  }
}

TYPED_TEST(H64, HotKeys) {
  WARPKV_TEST_EXECUTION(ex);
  auto map = fixed_map<TypeParam>(ex);
  race_on_hot_keys(map, 3, std::max<std::size_t>(300, static_cast<std::size_t>(2000 * test_scale())), 5);
}

// A fast launch that answers full leaves the table unchanged: new keys whose home is full, and
// insert_or_assign_fast of an external member (its assignment needs the lock).
TYPED_TEST(H64, FastLaunchAnsweringFullLeavesTheTableUnchanged) {
  WARPKV_TEST_EXECUTION(ex);
  auto map = fixed_map<TypeParam>(ex);
  const auto homed = keys_homed_at(map, 33, 16);
  const std::vector<std::uint32_t> first(homed.begin(), homed.begin() + 10);  // 7 residents, 3 external
  for (auto s : map.insert(first, first)) ASSERT_EQ(s, status::inserted);
  ASSERT_EQ(map.validate(), "");
  const auto before = map.retrieve_all();
  const std::vector<std::uint32_t> fresh(homed.begin() + 10, homed.end());
  const auto [st, counts] = fast_launch(map, fresh, ex);
  for (auto s : st) EXPECT_EQ(s, status::full);
  EXPECT_EQ(counts[status::full], fresh.size());
  // insert_or_assign_fast: residents are assigned in place, external members are handed over.
  const auto [st2, counts2] = fast_launch(map, first, ex, /*or_assign=*/false, 7);
  for (auto s : st2) EXPECT_EQ(s, status::found);
  const auto after = map.retrieve_all();
  EXPECT_EQ(after, before) << "a fast insert that answered full or found changed the table";
  ASSERT_EQ(map.validate(), "");
  const auto [st3, counts3] = fast_launch(map, first, ex, /*or_assign=*/true, 7);
  EXPECT_EQ(counts3[status::assigned], 7u);
  EXPECT_EQ(counts3[status::full], 3u);
  std::vector<std::uint32_t> out;
  const auto fs = map.find(first, out);
  for (std::size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(fs[i], status::found);
    const bool assigned = st3[i] == status::assigned;
    EXPECT_EQ(out[i], first[i] + (assigned ? 7u : 0u)) << i;
  }
  ASSERT_EQ(map.validate(), "");
  // The bulk call runs the same fast launch, then the complete insert for what came back full.
  for (auto s : map.insert_or_assign(first, first)) EXPECT_EQ(s, status::assigned);
  for (auto s : map.insert(fresh, fresh)) EXPECT_EQ(s, status::inserted);
  EXPECT_EQ(map.size(), homed.size());
  ASSERT_EQ(map.validate(), "");
}

// More keys for one home than the home and its 15 neighbours hold: no displacement and no stash
// in this landing, so the bulk API grows (a new seed) and every key ends up present.
TYPED_TEST(H64, AKeyWithoutRoomInReachMakesTheTableGrow) {
  WARPKV_TEST_EXECUTION(ex);
  auto map = fixed_map<TypeParam>(ex);
  const auto keys = keys_homed_at(map, 62, 7 * 16 + 5);  // wraps past the last bucket
  const auto st = map.insert(keys, keys);
  for (auto s : st) ASSERT_EQ(s, status::inserted);
  EXPECT_GT(map.rehash_count(), 0u);
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(fs[i], status::found);
    ASSERT_EQ(out[i], keys[i]);
  }
  ASSERT_EQ(map.validate(), "");
}

// External members leave their hop bits and digest consistent when erased one by one (validate()
// checks both), and a rebuild clears the tombstones.
TYPED_TEST(H64, ErasingExternalMembersRecomputesHopBitsAndDigestAndARebuildClearsTombs) {
  WARPKV_TEST_EXECUTION(ex);
  auto map = fixed_map<TypeParam>(ex);
  const auto keys = keys_homed_at(map, 40, 7 * 6);
  for (auto s : map.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
  ASSERT_EQ(map.validate(), "");
  std::vector<std::uint32_t> order(keys.rbegin(), keys.rend());  // externals first
  for (std::size_t i = 0; i < order.size(); i += 3) {
    const std::vector<std::uint32_t> some(order.begin() + static_cast<long>(i),
                                          order.begin() + static_cast<long>(std::min(order.size(), i + 3)));
    for (auto s : map.erase(some)) ASSERT_EQ(s, status::erased);
    ASSERT_EQ(map.validate(), "") << "after erasing " << i + some.size();
    std::vector<std::uint32_t> out;
    const auto fs = map.find(keys, out);
    for (std::size_t j = 0; j < keys.size(); ++j)
      ASSERT_EQ(fs[j], j + i + some.size() >= keys.size() ? status::not_found : status::found) << j;
  }
  EXPECT_EQ(map.size(), 0u);
  const std::size_t rebuilds = map.rehash_count();
  map.rehash(0);
  EXPECT_EQ(map.rehash_count(), rebuilds + 1);
  EXPECT_EQ(map.tombstones(), 0u);
  ASSERT_EQ(map.validate(), "");
  // Tombs past a quarter of the capacity: maintain() rebuilds.
  std::vector<std::uint32_t> many(300);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::uint32_t>(i * 7919 + 3);
  map.insert(many, many);
  const std::size_t before = map.rehash_count();
  map.erase(many);
  EXPECT_GT(map.rehash_count(), before);
  EXPECT_EQ(map.tombstones(), 0u);
  ASSERT_EQ(map.validate(), "");
}

#if WARPKV_HAS_CUDA
// The bulk find, erase and fast insert kernels keep their registers and no local memory (nvcc 13.0,
// sm_90, -Xptxas -v at the first landing: find 47 (tile 1, the find_register_budget of 44 gives 5
// blocks of 256 threads) / 39 (tile 4), fast insert 38 / 40, erase 40 / 40), read on the GPU.
TEST(HopscotchBucketsKernels, HotPathsKeepTheirRegisterBudget) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::cuda) GTEST_SKIP() << "kernel attributes are read on the GPU";
  expect_hot_kernels_within<hopscotch_bucket_ref<std::uint32_t, std::uint32_t>, 1>("H64 u32 tile 1", {48, 40, 40});
  expect_hot_kernels_within<hopscotch_bucket_ref<std::uint32_t, std::uint32_t>, 4>("H64 u32 tile 4", {48, 40, 40});
}
#endif

}  // namespace
}  // namespace warpkv::testing
