// cuckoo_map: the shared typed suite, plus tests aimed at cuckoo hashing's own hazards: keys
// must be found while eviction chains move them between buckets, one key inserted by many
// tiles at once is stored once, a table whose chains fail reports full through the ref and
// grows through the bulk API, both hash-function counts, and bad configurations.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "../common/hot_keys.hpp"
#include "../common/kernel_budget.hpp"
#include "../common/map_suite.hpp"
#include "../common/ref_checks.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/cuckoo/cuckoo_map.hpp"

namespace warpkv::testing {
namespace {

// Host tiles of several lanes are slow on a 2-core CI machine (each lane is a thread): the
// bench's type (u32/u32, 4 lanes) runs the suite; other widths run it with one lane, and the race
// tests below add a 2-lane tile (a bucket read in two rounds).
// u32 with one lane: the thread-per-operation kernels that read a packed bucket 16 bytes at a time.
using Maps = ::testing::Types<cuckoo_map<std::uint32_t, std::uint32_t, 4>, cuckoo_map<std::uint32_t, std::uint32_t, 1>,
                              cuckoo_map<std::uint64_t, std::uint64_t, 1>,
                              cuckoo_map<std::int32_t, float, 1>, cuckoo_map<std::int64_t, double, 1>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Cuckoo, MapSuite, Maps);

using cuckoo32 = cuckoo_map<std::uint32_t, std::uint32_t, 4>;
using cuckoo64 = cuckoo_map<std::uint64_t, std::uint64_t, 2>;
using cuckoo32_lane = cuckoo_map<std::uint32_t, std::uint32_t, 1>;  // same table, one-lane tiles: cheap on host

template <class Map>
class CuckooRaces : public ::testing::Test {};
using Both = ::testing::Types<cuckoo32, cuckoo64>;
TYPED_TEST_SUITE(CuckooRaces, Both);

// A one-lane u32 table that never grows (maximum load factor 1) with d hash functions, 1024 slots
// or more by the test scale.
cuckoo32_lane fixed_table(unsigned d, const execution& ex) {
  cuckoo_config cfg;
  cfg.max_load_factor = 1.0;
  cfg.hash_functions = d;
  return cuckoo32_lane(std::max<std::size_t>(1024, static_cast<std::size_t>(8192 * test_scale())), cfg, ex);
}

template <class K>
std::vector<K> iota_keys(std::size_t n, std::size_t from = 1) {
  std::vector<K> k(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = make_key<K>(from + i);
  return k;
}

// A table filled close to its limit, then one batch that mixes finds of the resident keys with
// inserts of new ones: the inserts run eviction chains that move resident keys between their
// buckets while the finds look for them. Every find must hit with the key's value.
TYPED_TEST(CuckooRaces, FindsNeverMissKeysThatEvictionsMove) {
  using K = typename TypeParam::key_type;
  using V = typename TypeParam::mapped_type;
  WARPKV_TEST_EXECUTION(ex);
  const std::size_t n_res = std::max<std::size_t>(400, static_cast<std::size_t>(4000 * test_scale()));
  for (unsigned d : {2u, 3u}) {
    cuckoo_config cfg;
    cfg.max_load_factor = 1.0;
    cfg.hash_functions = d;
    TypeParam map(n_res, cfg, ex);
    const std::size_t cap = map.capacity();
    const std::size_t resident = static_cast<std::size_t>(0.6 * static_cast<double>(cap));
    const std::size_t fresh = static_cast<std::size_t>((d == 3 ? 0.3 : 0.2) * static_cast<double>(cap));
    const auto keys = iota_keys<K>(resident + fresh);
    std::vector<V> values(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) values[i] = static_cast<V>(i * 7 + 3);
    map.insert(std::span<const K>(keys).first(resident), std::span<const V>(values).first(resident));
    ASSERT_EQ(map.size(), resident);
    std::vector<op> ops;
    std::vector<K> k;
    std::vector<V> v;
    std::mt19937_64 rng(d);
    for (std::size_t round = 0; round < 3; ++round)
      for (std::size_t i = 0; i < resident; ++i) ops.push_back(op::find), k.push_back(keys[i]), v.push_back(0);
    for (std::size_t i = resident; i < keys.size(); ++i) ops.push_back(op::insert), k.push_back(keys[i]), v.push_back(values[i]);
    std::vector<std::size_t> order(ops.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<op> o2;
    std::vector<K> k2;
    std::vector<V> v2;
    for (std::size_t i : order) o2.push_back(ops[i]), k2.push_back(k[i]), v2.push_back(v[i]);
    std::vector<V> out;
    const auto st = map.execute(o2, k2, v2, out);
    std::unordered_map<K, V> want;
    for (std::size_t i = 0; i < keys.size(); ++i) want[keys[i]] = values[i];
    for (std::size_t i = 0; i < o2.size(); ++i) {
      if (o2[i] == op::find) {
        ASSERT_EQ(st[i], status::found) << "d=" << d << " key " << +k2[i];
        ASSERT_EQ(out[i], want[k2[i]]);
      } else {
        ASSERT_EQ(st[i], status::inserted);
      }
    }
    ASSERT_EQ(map.size(), keys.size());
    ASSERT_EQ(map.validate(), "");
    EXPECT_EQ(map.rehash_count(), 0u) << "d=" << d << ": the test wants evictions, not growth";
  }
}

// Many tiles insert, upsert, erase and find three keys at once (tests/common/hot_keys.hpp).
TYPED_TEST(CuckooRaces, RacingWritersOnTheSameKeys) {
  WARPKV_TEST_EXECUTION(ex);
  TypeParam map(256, {}, ex);
  race_on_hot_keys(map, 3, std::max<std::size_t>(300, static_cast<std::size_t>(1500 * test_scale())), 6);
}

// Inside the device ref nothing grows: a tiny table (8 buckets of 8) takes at most its 64 slots
// and reports the rest full, and exactly the keys reported inserted are there.
TEST(CuckooRef, ReportsFullWhenChainsFail) {
  WARPKV_TEST_EXECUTION(ex);
  cuckoo_config cfg;
  cfg.max_load_factor = 1.0;
  cuckoo32 map(64, cfg, ex);
  ASSERT_EQ(map.capacity(), 64u);
  const std::size_t n = 100;
  const auto keys = iota_keys<std::uint32_t>(n);
  const auto [summary, statuses] = insert_through_ref(map, keys, ex);
  EXPECT_LE(summary[status::inserted], 64u);
  EXPECT_GE(summary[status::inserted], 40u) << "evictions should fill most of a tiny table";
  EXPECT_EQ(summary[status::inserted] + summary[status::full], n);
  expect_found_exactly_inserted(map, keys, statuses);
  // The bulk API turns full into growth and keeps every key.
  cuckoo32 grown(64, cfg, ex);
  for (auto s : grown.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
  EXPECT_GT(grown.rehash_count(), 0u);
  EXPECT_EQ(grown.size(), n);
  ASSERT_EQ(grown.validate(), "");
}

// With evictions a cuckoo table fills far beyond what its keys' first buckets allow: 3 hash
// functions reach 0.95 and 2 reach 0.85 of a fixed table without growing.
TEST(CuckooRef, EvictionsReachHighLoadWithoutGrowth) {
  WARPKV_TEST_EXECUTION(ex);
  for (const auto& [d, lf] : {std::pair{3u, 0.95}, std::pair{2u, 0.85}}) {
    cuckoo32_lane map = fixed_table(d, ex);
    const std::size_t cap = map.capacity();
    const auto keys = iota_keys<std::uint32_t>(static_cast<std::size_t>(lf * static_cast<double>(cap)));
    for (auto s : map.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
    EXPECT_EQ(map.capacity(), cap) << "d=" << d;
    EXPECT_EQ(map.rehash_count(), 0u) << "d=" << d;
    ASSERT_EQ(map.validate(), "");
    // A key never sits outside its buckets, and every bucket's key count is at most 4: checked by
    // validate(); here also that erasing half and re-inserting them keeps the table consistent.
    const std::vector<std::uint32_t> half(keys.begin(), keys.begin() + static_cast<long>(keys.size() / 2));
    for (auto s : map.erase(half)) ASSERT_EQ(s, status::erased);
    for (auto s : map.insert(half, half)) ASSERT_EQ(s, status::inserted);
    std::vector<std::uint32_t> out;
    const auto fs = map.find(keys, out);
    for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(fs[i], status::found);
    ASSERT_EQ(map.validate(), "");
  }
}

// The fast insert never evicts: in a tiny table it places keys first-fit until all of a key's
// buckets are full and hands the rest back as full, changing nothing for them; validate() checks
// rule F (no key behind a fresh slot).
TEST(CuckooFast, HandsBackWhatItCannotPlaceWithoutEvicting) {
  WARPKV_TEST_EXECUTION(ex);
  cuckoo_config cfg;
  cfg.max_load_factor = 1.0;
  cuckoo32 map(64, cfg, ex);
  ASSERT_EQ(map.capacity(), 64u);
  const auto keys = iota_keys<std::uint32_t>(100);
  const auto [summary, statuses] = insert_through_ref<detail::pass::fast>(map, keys, ex);
  EXPECT_EQ(summary[status::inserted] + summary[status::full], keys.size());
  EXPECT_GE(summary[status::full], 36u);
  EXPECT_GT(summary[status::inserted], 20u);
  expect_found_exactly_inserted(map, keys, statuses);
  // size() does not count writes through the ref, so validate() stops at its last check only.
  EXPECT_EQ(map.validate().rfind("table holds", 0), 0u) << map.validate();
}

// A first bucket with holes (erased slots) but no fresh slot does not end an insert's walk: the
// key may sit in a later bucket, and inserting it into the hole would store it twice (a home-only
// first pass that did so was caught by this test, session 17). Resident keys at LF 0.92 (many past
// their first bucket), every fifth erased, then every other resident inserted again (with new
// keys among them) with one-lane tiles: each must answer found (assigned), none inserted twice.
TEST(CuckooFast, InsertsWalkPastHolesToKeysFurtherOn) {
  WARPKV_TEST_EXECUTION(ex);
  using map1 = cuckoo_map<std::uint32_t, std::uint32_t, 1>;
  for (const bool assign : {false, true}) {
    cuckoo_config cfg;
    cfg.max_load_factor = 1.0;
    map1 map(std::max<std::size_t>(1024, static_cast<std::size_t>(8192 * test_scale())), cfg, ex);
    const std::size_t cap = map.capacity();
    const std::size_t resident = static_cast<std::size_t>(0.92 * static_cast<double>(cap));
    const std::size_t extra = cap / 50;
    const auto keys = iota_keys<std::uint32_t>(resident + extra);
    std::vector<std::uint32_t> vals(resident, 5);
    map.insert(std::span<const std::uint32_t>(keys).first(resident), vals);
    ASSERT_EQ(map.capacity(), cap);
    std::vector<std::uint32_t> gone, kept;
    for (std::size_t i = 0; i < resident; ++i) (i % 5 == 0 ? gone : kept).push_back(keys[i]);
    map.erase(gone);
    std::vector<std::uint32_t> k = kept;
    for (std::size_t i = resident; i < keys.size(); ++i) k.push_back(keys[i]);
    std::mt19937_64 rng(assign ? 17 : 18);
    std::shuffle(k.begin(), k.end(), rng);
    // In batches of cap / 8: a batch is sized up front for all of its keys being new (a larger
    // one would grow the table, and a rebuild leaves no holes).
    const std::vector<std::uint32_t> v(k.size(), 9);
    std::vector<status> st;
    for (std::size_t at = 0; at < k.size(); at += cap / 8) {
      const std::size_t len = std::min(cap / 8, k.size() - at);
      const std::span<const std::uint32_t> kk(k.data() + at, len), vv(v.data() + at, len);
      const auto part = assign ? map.insert_or_assign(kk, vv) : map.insert(kk, vv);
      st.insert(st.end(), part.begin(), part.end());
    }
    ASSERT_EQ(map.capacity(), cap) << "the test wants the holes, not a rebuilt table";
    const std::set<std::uint32_t> old(kept.begin(), kept.end());
    std::size_t inserted = 0;
    for (std::size_t i = 0; i < st.size(); ++i) {
      if (old.count(k[i]) != 0) ASSERT_EQ(st[i], assign ? status::assigned : status::found) << "resident key " << k[i];
      else ASSERT_EQ(st[i], status::inserted) << "new key " << k[i];
      inserted += st[i] == status::inserted ? 1u : 0u;
    }
    EXPECT_EQ(inserted, extra);
    ASSERT_EQ(map.size(), kept.size() + extra);
    ASSERT_EQ(map.validate(), "");
  }
}

// Uniform insert and insert_or_assign batches in which every key comes twice (and resident keys
// once more), into a table at 0.8 of its slots, filling it to 0.9: far enough that some keys need
// the second (evicting) pass. Each key is stored once, exactly one of its inserts reports
// inserted, every other op on it found / assigned, and the stored value is one of its values.
TEST(CuckooFast, DuplicatesInOneBatchAreStoredOnce) {
  WARPKV_TEST_EXECUTION(ex);
  for (const bool assign : {false, true}) {
    cuckoo_config cfg;
    cfg.max_load_factor = 1.0;
    cuckoo32 map(std::max<std::size_t>(1024, static_cast<std::size_t>(8192 * test_scale())), cfg, ex);
    const std::size_t cap = map.capacity();
    const std::size_t resident = static_cast<std::size_t>(0.8 * static_cast<double>(cap));
    const std::size_t fresh = static_cast<std::size_t>(0.1 * static_cast<double>(cap)) / 2;
    const auto keys = iota_keys<std::uint32_t>(resident + fresh);
    std::vector<std::uint32_t> vals(resident);
    for (std::size_t i = 0; i < resident; ++i) vals[i] = static_cast<std::uint32_t>(i * 8 + 7);
    map.insert(std::span<const std::uint32_t>(keys).first(resident), vals);
    ASSERT_EQ(map.validate(), "");
    std::vector<std::uint32_t> k, v;
    for (std::size_t i = resident; i < keys.size(); ++i)
      for (std::uint32_t copy = 0; copy < 2; ++copy) k.push_back(keys[i]), v.push_back(static_cast<std::uint32_t>(i * 8 + copy));
    for (std::size_t i = 0; i < fresh; ++i) k.push_back(keys[i]), v.push_back(static_cast<std::uint32_t>(i * 8 + 2));
    std::mt19937_64 rng(assign ? 7 : 8);
    std::vector<std::size_t> order(k.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::uint32_t> k2, v2;
    for (std::size_t i : order) k2.push_back(k[i]), v2.push_back(v[i]);
    const auto st = assign ? map.insert_or_assign(k2, v2) : map.insert(k2, v2);
    ASSERT_EQ(map.capacity(), cap) << "the test wants the second pass, not growth";
    std::unordered_map<std::uint32_t, int> inserted;
    std::set<std::uint32_t> residents(keys.begin(), keys.begin() + static_cast<long>(resident));
    for (std::size_t i = 0; i < st.size(); ++i) {
      if (st[i] == status::inserted) ++inserted[k2[i]];
      else ASSERT_EQ(st[i], assign ? status::assigned : status::found) << "key " << k2[i];
    }
    ASSERT_EQ(inserted.size(), fresh);
    for (const auto& [key, n] : inserted) {
      ASSERT_EQ(n, 1) << "key " << key;
      ASSERT_EQ(residents.count(key), 0u);
    }
    ASSERT_EQ(map.size(), keys.size());
    ASSERT_EQ(map.validate(), "");
    std::vector<std::uint32_t> out;
    const auto fs = map.find(keys, out);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(fs[i], status::found);
      ASSERT_EQ(out[i] / 8, i);
      if (i >= resident) {
        ASSERT_LT(out[i] % 8, 2u);
      } else if (i < fresh) {
        ASSERT_EQ(out[i] % 8, assign ? 2u : 7u);
      }
    }
  }
}

// Rule F is what lets a fast find or insert stop at a bucket with a fresh slot. An erase leaves a
// hole, not a fresh slot: keys behind holes are still found, re-inserted keys (which may take the
// holes) are stored once, absent keys are not found, and validate() checks F after each step.
TEST(CuckooFast, ErasedSlotsBecomeHolesAndNothingIsLostAfter) {
  WARPKV_TEST_EXECUTION(ex);
  cuckoo_config cfg;
  cfg.max_load_factor = 1.0;
  cuckoo32 map(std::max<std::size_t>(512, static_cast<std::size_t>(4096 * test_scale())), cfg, ex);
  const std::size_t cap = map.capacity();
  const auto keys = iota_keys<std::uint32_t>(static_cast<std::size_t>(0.8 * static_cast<double>(cap)));
  for (auto s : map.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
  ASSERT_EQ(map.validate(), "");
  std::vector<std::uint32_t> evens, odds;
  for (std::size_t i = 0; i < keys.size(); ++i) (i % 2 == 0 ? evens : odds).push_back(keys[i]);
  for (auto s : map.erase(evens)) ASSERT_EQ(s, status::erased);
  std::vector<std::uint32_t> out;
  auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(fs[i], i % 2 == 0 ? status::not_found : status::found) << "key " << keys[i];
    if (i % 2 == 1) {
      ASSERT_EQ(out[i], keys[i]);
    }
  }
  // Odd keys again (present: found) and the even ones (absent: inserted), one batch.
  std::vector<std::uint32_t> again = odds;
  again.insert(again.end(), evens.begin(), evens.end());
  const auto st = map.insert(again, again);
  for (std::size_t i = 0; i < again.size(); ++i) ASSERT_EQ(st[i], i < odds.size() ? status::found : status::inserted);
  ASSERT_EQ(map.size(), keys.size());
  ASSERT_EQ(map.validate(), "");
  fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(fs[i], status::found);
  const auto absent = iota_keys<std::uint32_t>(keys.size(), keys.size() + 1);  // make_key is one-to-one
  for (auto s : map.find(absent, out)) ASSERT_EQ(s, status::not_found);
  // A rebuild leaves no holes, and keeps every key.
  map.rehash(2 * map.capacity());
  ASSERT_EQ(map.validate(), "");
  fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(fs[i], status::found);
}

// Erase-only launches (erase batches, a mixed batch's erase phase) erase by one CAS to a hole
// (erase_only), without locks: hot keys erased many times in one batch are erased once each, every
// other erase of them answers not_found, absent keys not_found, and the keys beside them stay;
// in a mixed batch too (its erases run after its finds and writes). Tiles 1 and 4 (the default).
template <class Map>
void expect_hot_erases_once_each(const execution& ex) {
  cuckoo_config cfg;
  cfg.max_load_factor = 1.0;
  Map map(1024, cfg, ex);
  const auto keys = iota_keys<std::uint32_t>(600);  // 0.59 of the slots, some past their first bucket
  map.insert(keys, keys);
  ASSERT_EQ(map.size(), keys.size());
  // Erase keys[0..100) 40 times each and 100 absent keys 10 times each, shuffled, in one batch.
  std::vector<std::uint32_t> batch;
  for (int r = 0; r < 40; ++r)
    for (std::size_t i = 0; i < 100; ++i) batch.push_back(keys[i]);
  const auto absent = iota_keys<std::uint32_t>(100, keys.size() + 1);
  for (int r = 0; r < 10; ++r) batch.insert(batch.end(), absent.begin(), absent.end());
  std::mt19937_64 rng(23);
  std::shuffle(batch.begin(), batch.end(), rng);
  const auto st = map.erase(batch);
  std::unordered_map<std::uint32_t, int> erased;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE(st[i] == status::erased || st[i] == status::not_found) << i;
    if (st[i] == status::erased) ++erased[batch[i]];
  }
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(erased[keys[i]], 1) << "key " << keys[i];
  for (const auto k : absent) EXPECT_EQ(erased.count(k), 0u) << "absent key " << k;
  EXPECT_EQ(map.size(), keys.size() - 100);
  ASSERT_EQ(map.validate(), "");
  std::vector<std::uint32_t> out;
  const auto fs = map.find(keys, out);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(fs[i], i < 100 ? status::not_found : status::found) << "key " << keys[i];
    if (i >= 100) {
      ASSERT_EQ(out[i], keys[i]);
    }
  }
  // A mixed batch: keys[100..200) erased 30 times each beside finds of keys[200..300).
  std::vector<op> ops;
  std::vector<std::uint32_t> mk;
  for (int r = 0; r < 30; ++r)
    for (std::size_t i = 100; i < 300; ++i) ops.push_back(i < 200 ? op::erase : op::find), mk.push_back(keys[i]);
  const std::vector<std::uint32_t> mv(mk.size(), 1);
  std::vector<std::uint32_t> got;
  const auto ms = map.execute(ops, mk, mv, got);
  std::unordered_map<std::uint32_t, int> once;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i] == op::find) {
      ASSERT_EQ(ms[i], status::found) << i;
      ASSERT_EQ(got[i], mk[i]) << i;
    } else {
      ASSERT_TRUE(ms[i] == status::erased || ms[i] == status::not_found) << i;
      if (ms[i] == status::erased) ++once[mk[i]];
    }
  }
  for (std::size_t i = 100; i < 200; ++i) EXPECT_EQ(once[keys[i]], 1) << "key " << keys[i];
  EXPECT_EQ(map.size(), keys.size() - 200);
  ASSERT_EQ(map.validate(), "");
}

TEST(CuckooFast, HotKeysInEraseOnlyLaunchesAreErasedOnce) {
  WARPKV_TEST_EXECUTION(ex);
  expect_hot_erases_once_each<cuckoo_map<std::uint32_t, std::uint32_t, 1>>(ex);
  expect_hot_erases_once_each<cuckoo32>(ex);
}

// insert_evicting looks for the key in all of its buckets under the locks before it places or
// evicts: every resident key of a table at 0.95 (d = 3; 0.83 with d = 2), many of them in their
// last bucket, inserted again through the ref answers found, and nothing changes. (A version that
// skipped the third bucket's look passed every other test here.)
TEST(CuckooRef, EvictingInsertsFindResidentKeysInEveryBucket) {
  WARPKV_TEST_EXECUTION(ex);
  for (const auto& [d, lf] : {std::pair{3u, 0.95}, std::pair{2u, 0.83}}) {
    cuckoo32_lane map = fixed_table(d, ex);
    const auto keys = iota_keys<std::uint32_t>(static_cast<std::size_t>(lf * static_cast<double>(map.capacity())));
    for (auto s : map.insert(keys, keys)) ASSERT_EQ(s, status::inserted);
    const auto [summary, statuses] = insert_through_ref(map, keys, ex);  // the complete pass: insert_evicting
    for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(statuses[i], status::found) << "d=" << d << " key " << keys[i];
    ASSERT_EQ(map.validate(), "");
  }
}

// insert_evicting (the order of work of the complete pass behind the fast one: the chain before
// the locks, its first move under the key's locks) against finds of resident keys in one launch,
// through the ref: a table filled to 0.9 by the bulk API, then tiles that find resident keys
// (every find must hit with its value while evictions move it) beside tiles that insert new keys,
// some of them twice (exactly one `inserted` each), until the table is at 0.95. Both hash-function
// counts; validate() checks placement, uniqueness and rule F after.
template <class Ref>
struct evicting_race_op {
  Ref ref;
  const std::uint32_t* keys;
  const std::uint8_t* is_find;  // 1: find keys[i]; 0: insert_evicting keys[i] -> keys[i] + 1
  std::uint32_t* values_out;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    if (is_find[i] == 0) return ref.insert_evicting(t, keys[i], keys[i] + 1);
    std::uint32_t v = 0;
    const status s = ref.find(t, keys[i], &v);
    if (t.thread_rank() == 0) values_out[i] = v;
    return s;
  }
};

TEST(CuckooRef, EvictingInsertsKeepEveryKeyFoundWhileTheyMoveIt) {
  WARPKV_TEST_EXECUTION(ex);
  for (const unsigned d : {3u, 2u}) {
    cuckoo32_lane map = fixed_table(d, ex);
    const std::size_t cap = map.capacity();
    const double from = d == 3 ? 0.9 : 0.78, to = d == 3 ? 0.95 : 0.83;
    const std::size_t resident = static_cast<std::size_t>(from * static_cast<double>(cap));
    const std::size_t fresh = static_cast<std::size_t>((to - from) * static_cast<double>(cap));
    const auto keys = iota_keys<std::uint32_t>(resident + fresh);
    std::vector<std::uint32_t> vals(resident);
    for (std::size_t i = 0; i < resident; ++i) vals[i] = keys[i] + 1;
    map.insert(std::span<const std::uint32_t>(keys).first(resident), vals);
    ASSERT_EQ(map.capacity(), cap);
    // Two finds of every resident key and an insert of every new key (every fourth twice: one of
    // the two must answer found), shuffled together so that they overlap.
    std::vector<std::pair<std::uint32_t, std::uint8_t>> ops;
    for (std::size_t round = 0; round < 2; ++round)
      for (std::size_t i = 0; i < resident; ++i) ops.emplace_back(keys[i], 1);
    for (std::size_t i = resident; i < keys.size(); ++i) {
      ops.emplace_back(keys[i], 0);
      if (i % 4 == 0) ops.emplace_back(keys[i], 0);
    }
    std::mt19937_64 rng(d);
    std::shuffle(ops.begin(), ops.end(), rng);
    std::vector<std::uint32_t> k;
    std::vector<std::uint8_t> kind;
    for (const auto& [key, f] : ops) k.push_back(key), kind.push_back(f);
    auto kb = buffer<std::uint32_t>::from_host(k, ex);
    auto fb = buffer<std::uint8_t>::from_host(kind, ex);
    buffer<std::uint32_t> out(k.size(), ex);
    buffer<status> st(k.size(), ex);
    launch_batch<cuckoo32_lane::tile_size>(
        ex, k.size(), evicting_race_op<cuckoo32_lane::ref_type>{map.ref(), kb.data(), fb.data(), out.data()}, st.data());
    const auto statuses = st.to_vector();
    const auto got = out.to_vector();
    std::unordered_map<std::uint32_t, int> inserted;
    for (std::size_t i = 0; i < k.size(); ++i) {
      if (kind[i] == 1) {
        ASSERT_EQ(statuses[i], status::found) << "d=" << d << " resident key " << k[i];
        ASSERT_EQ(got[i], k[i] + 1) << "d=" << d;
      } else if (statuses[i] == status::inserted) {
        ++inserted[k[i]];
      } else {
        ASSERT_EQ(statuses[i], status::found) << "d=" << d << " new key " << k[i] << " (the table has room)";
      }
    }
    ASSERT_EQ(inserted.size(), fresh) << "d=" << d;
    for (const auto& [key, n] : inserted) ASSERT_EQ(n, 1) << "d=" << d << " key " << key;
    std::vector<std::uint32_t> vout;
    const auto fs = map.find(keys, vout);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(fs[i], status::found) << "d=" << d << " key " << keys[i];
      ASSERT_EQ(vout[i], keys[i] + 1);
    }
    // size() does not count writes through the ref, so validate() stops at its last check only.
    EXPECT_EQ(map.validate().rfind("table holds", 0), 0u) << map.validate();
  }
}

#if WARPKV_HAS_CUDA
// Issue 23's register budget for the hot kernels of the default tile (8 lanes, u32 pairs): the
// find-only kernel and the fast insert carry no rare path, so they stay at <= 48 registers with no
// local memory at all (no spills, no stack: the eviction chain lives in the second pass's kernel).
// Figures from nvcc 13.0 for sm_90 (docs/perf.md, session 10): find 32, fast insert 48, both 0 B.
// A new toolkit that exceeds them needs a look at `-Xptxas -v`, not a looser bound.
TEST(CuckooKernels, HotPathsKeepTheirRegisterBudget) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::cuda) GTEST_SKIP() << "kernel attributes are read on the GPU";
  using ref32 = cuckoo_ref<std::uint32_t, std::uint32_t>;
  constexpr int T = cuckoo_map<std::uint32_t, std::uint32_t>::tile_size;
  const auto find = bulk_kernel_attributes<T, detail::find_op<ref32, std::uint32_t, std::uint32_t>>();
  const auto insert = bulk_kernel_attributes<T, first_insert_op<ref32, std::uint32_t, std::uint32_t>>();
  EXPECT_LE(find.numRegs, 48);
  EXPECT_EQ(find.localSizeBytes, 0u);
  EXPECT_LE(insert.numRegs, 48);
  EXPECT_EQ(insert.localSizeBytes, 0u);
  std::cout << "[ registers ] find " << find.numRegs << " (local " << find.localSizeBytes << " B), fast insert "
            << insert.numRegs << " (local " << insert.localSizeBytes << " B)\n";
  // One lane per operation (a thread reads the whole bucket: 8 words in registers). The erase
  // kernel is not a lock-free fast path (erase locks its buckets), as at tile 8.
  const auto find1 = bulk_kernel_attributes<1, detail::find_op<ref32, std::uint32_t, std::uint32_t>>();
  const auto insert1 = bulk_kernel_attributes<1, first_insert_op<ref32, std::uint32_t, std::uint32_t>>();
  EXPECT_LE(find1.numRegs, 48);
  EXPECT_EQ(find1.localSizeBytes, 0u);
  EXPECT_LE(insert1.numRegs, 48);
  EXPECT_EQ(insert1.localSizeBytes, 0u);
  std::cout << "[ registers ] tile 1: find " << find1.numRegs << ", fast insert " << insert1.numRegs << "\n";
}
#endif

TEST(CuckooRef, BadConfigurationsAreRefused) {
  WARPKV_TEST_EXECUTION(ex);
  const auto expect_invalid = [&](auto change) {
    cuckoo_config cfg;
    change(cfg);
    try {
      cuckoo32 m(100, cfg, ex);
      FAIL() << "expected warpkv::error";
    } catch (const warpkv::error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
    }
  };
  expect_invalid([](cuckoo_config& c) { c.hash_functions = 1; });
  expect_invalid([](cuckoo_config& c) { c.hash_functions = 4; });
  expect_invalid([](cuckoo_config& c) { c.max_chain = 0; });
  expect_invalid([](cuckoo_config& c) { c.max_chain = 65; });
  expect_invalid([](cuckoo_config& c) { c.eviction_attempts = 0; });
  expect_invalid([](cuckoo_config& c) { c.max_load_factor = 0.0; });
  // A custom empty key: 0 is refused, the maximum becomes an ordinary key.
  cuckoo32 custom(100, {}, ex, 0u);
  const std::vector<std::uint32_t> k{0u, 0xffffffffu};
  const auto st = custom.insert(k, k);
  EXPECT_EQ(st[0], status::invalid_key);
  EXPECT_EQ(st[1], status::inserted);
  ASSERT_EQ(custom.validate(), "");
}

}  // namespace
}  // namespace warpkv::testing
