// kv_cache's score policies (issue 25, item 3; HierarchicalKV's kLfu, kEpochLru, kEpochLfu,
// kCustomized): in a cache of two buckets every key's candidates are the whole table, so each
// insert into the full cache evicts the policy's smallest score, and the tests can name the
// victim. One key per call: the order of a batch's operations plays no part.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "../common/backend.hpp"
#include "../common/backend_arrays.hpp"
#include "../common/expect_invalid.hpp"
#include "warpkv/cache/kv_cache.hpp"

namespace warpkv::testing {
namespace {


/// Key id -> the cache's key (never the sentinel, never 0).
std::uint64_t key_of(std::uint64_t id) { return id * 0x9e3779b97f4a7c15ull % 0xfffffffffffull + 1; }

/// The keys of ids 1 .. n.
std::vector<std::uint64_t> first_keys(std::uint64_t n) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t id = 1; id <= n; ++id) keys.push_back(key_of(id));
  return keys;
}

constexpr std::uint64_t low32 = 0xffffffffull;

/// A cache of the design D with 8 slots in 2 buckets of 4, driven one key per call through the
/// HierarchicalKV-named calls (arrays in the backend's memory).
template <class D>
struct two_buckets {
  execution ex;
  kv_cache<std::uint64_t, 4, 4, D> c;
  explicit two_buckets(const execution& e) : ex(e), c(cache_config{8, 8}, e) {}

  /// insert_or_assign of `key` (value: the key) with `score` (null: none) by insert_and_evict:
  /// the key it evicted (0: none; an assignment evicts nothing), its score in *ev_score.
  std::uint64_t put(std::uint64_t key, const std::uint64_t* score = nullptr, std::uint64_t* ev_score = nullptr) {
    auto k = on(ex, std::vector<std::uint64_t>{key});
    auto v = on(ex, std::vector<std::uint64_t>{key});
    buffer<std::uint64_t> sc = score != nullptr ? on(ex, std::vector<std::uint64_t>{*score}) : buffer<std::uint64_t>{};
    buffer<std::uint64_t> evk(1, ex), evs(1, ex);
    buffer<status> st(1, ex);
    const std::size_t n =
        c.insert_and_evict(1, k.data(), v.data(), evk.data(), nullptr, evs.data(), score != nullptr ? sc.data() : nullptr, st.data());
    EXPECT_NE(back(st)[0], status::invalid_key);
    if (n == 0) return 0;
    if (ev_score != nullptr) *ev_score = back(evs)[0];
    return back(evk)[0];
  }
  std::uint64_t put(std::uint64_t key, std::uint64_t score, std::uint64_t* ev_score = nullptr) { return put(key, &score, ev_score); }
  /// find of `key`: whether it hit (and then its value is the key).
  bool hit(std::uint64_t key) {
    auto k = on(ex, std::vector<std::uint64_t>{key});
    buffer<std::uint64_t> out(1, ex);
    buffer<status> st(1, ex);
    c.find(1, k.data(), out.data(), nullptr, st.data());
    const bool found = back(st)[0] == status::found;
    if (found) {
      EXPECT_EQ(back(out)[0], key);
    }
    return found;
  }
  /// key -> score of every live entry (export_batch over the whole table).
  std::map<std::uint64_t, std::uint64_t> scores() const {
    buffer<std::uint64_t> keys(c.capacity(), ex), sc(c.capacity(), ex);
    const std::size_t n = c.export_batch(c.capacity(), 0, keys.data(), nullptr, sc.data());
    const auto k = back(keys), s = back(sc);
    std::map<std::uint64_t, std::uint64_t> m;
    for (std::size_t i = 0; i < n; ++i) m[k[i]] = s[i];
    return m;
  }
};

// ---- lfu ----------------------------------------------------------------------------------------
// Eight keys hit 1..8 times, the most hit ones first (so that they are the least recently used):
// each of four new keys (hit often at once) evicts the least hit resident key, not the least
// recent one, and the counts are 1 (the insert) + the hits.
TEST(CacheScoreLfu, KeepsTheMostFrequentlyHitKeys) {
  WARPKV_TEST_EXECUTION(ex);
  two_buckets<cache_designs::optimistic_lfu> t(ex);
  ASSERT_EQ(t.c.capacity(), 8u);
  const std::vector<std::uint64_t> hits{5, 1, 7, 3, 8, 2, 6, 4};
  const std::vector<std::uint64_t> keys = first_keys(8);
  for (const std::uint64_t k : keys) EXPECT_EQ(t.put(k), 0u);
  for (std::uint64_t h = 8; h >= 1; --h) {  // the most hit key first: recency is the reverse of frequency
    for (std::size_t i = 0; i < 8; ++i) {
      if (hits[i] != h) continue;
      for (std::uint64_t r = 0; r < h; ++r) ASSERT_TRUE(t.hit(keys[i]));
    }
  }
  const auto before = t.scores();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(before.at(keys[i]), 1 + hits[i]) << "key " << i;
  for (std::uint64_t n = 1; n <= 4; ++n) {
    std::uint64_t ev_score = 0;
    const std::uint64_t gone = t.put(key_of(100 + n), nullptr, &ev_score);
    std::size_t least = 0;  // the resident key hit n times
    while (hits[least] != n) ++least;
    EXPECT_EQ(gone, keys[least]) << "insert " << n << " did not evict the least frequently hit key";
    EXPECT_EQ(ev_score, 1 + n);
    for (int r = 0; r < 20; ++r) ASSERT_TRUE(t.hit(key_of(100 + n)));
  }
  std::set<std::uint64_t> expect{key_of(101), key_of(102), key_of(103), key_of(104)};
  for (std::size_t i = 0; i < 8; ++i)
    if (hits[i] > 4) expect.insert(keys[i]);
  std::set<std::uint64_t> got;
  for (const auto& [k, s] : t.scores()) got.insert(k);
  EXPECT_EQ(got, expect);
  // a fresh entry has the smallest count: the next insert evicts it (LFU's known trait)
  const std::uint64_t fresh = key_of(200);
  t.put(fresh);
  EXPECT_EQ(t.put(key_of(201)), fresh);
}

// Insert scores are count increments (HKV's kLfu): an insert stores the given count, a write to a
// live entry and assign add to it, find_or_insert counts a found key's hit; counts saturate.
TEST(CacheScoreLfu, GivenScoresAreIncrementsAndCountsSaturate) {
  WARPKV_TEST_EXECUTION(ex);
  two_buckets<cache_designs::optimistic_lfu> t(ex);
  const std::uint64_t a = key_of(1), b = key_of(2);
  t.put(a, 10);
  t.put(a, 5);  // assigned: + 5
  EXPECT_EQ(t.scores().at(a), 15u);
  auto k = on(ex, std::vector<std::uint64_t>{a, b});
  auto v = on(ex, std::vector<std::uint64_t>{a, b});
  auto sc = on(ex, std::vector<std::uint64_t>{100, 7});
  buffer<bool> found(2, ex);
  t.c.find_or_insert(2, k.data(), v.data(), sc.data(), found.data());
  EXPECT_EQ(t.scores().at(a), 16u) << "a found key counts a hit";
  EXPECT_EQ(t.scores().at(b), 7u) << "an inserted key takes its score";
  auto big = on(ex, std::vector<std::uint64_t>{~0ull - 3, 1});
  EXPECT_EQ(t.c.assign(2, k.data(), nullptr, big.data())[status::assigned], 2u);
  EXPECT_EQ(t.scores().at(a), ~0ull) << "assign adds, saturating";
  EXPECT_EQ(t.scores().at(b), 8u);
  EXPECT_TRUE(t.hit(a));
  EXPECT_EQ(t.scores().at(a), ~0ull) << "a hit at the top stays there";
}

// ---- epoch_lru ----------------------------------------------------------------------------------
// Keys of epoch 2 are inserted first, keys of epoch 1 after them (more recent, older epoch): under
// epoch 2 the inserts evict epoch 1's entries first, in their recency order, and only then epoch
// 2's, least recent first (a hit refreshes within the epoch).
TEST(CacheScoreEpochLru, OlderEpochGoesFirstWhateverItsRecency) {
  WARPKV_TEST_EXECUTION(ex);
  two_buckets<cache_designs::optimistic_epoch_lru> t(ex);
  const std::vector<std::uint64_t> keys = first_keys(8);
  t.c.set_global_epoch(2);
  for (std::size_t i = 4; i < 8; ++i) t.put(keys[i]);
  t.c.set_global_epoch(1);
  for (std::size_t i = 0; i < 4; ++i) t.put(keys[i]);
  EXPECT_TRUE(t.hit(keys[0]));  // refreshed, still epoch 1
  const auto s = t.scores();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(s.at(keys[i]) >> 32, i < 4 ? 1u : 2u) << "key " << i;
  EXPECT_GT(s.at(keys[0]) & low32, s.at(keys[3]) & low32) << "the hit stored a newer stamp";
  t.c.set_global_epoch(2);
  const std::vector<std::size_t> epoch1_order{1, 2, 3, 0};  // key 0 was refreshed last
  for (std::size_t n = 0; n < 4; ++n) EXPECT_EQ(t.put(key_of(100 + n)), keys[epoch1_order[n]]) << "insert " << n;
  EXPECT_TRUE(t.hit(keys[4]));  // now the most recent of epoch 2's first four
  EXPECT_EQ(t.put(key_of(104)), keys[5]);
  EXPECT_EQ(t.put(key_of(105)), keys[6]);
  EXPECT_EQ(t.put(key_of(106)), keys[7]);
  EXPECT_EQ(t.put(key_of(107)), key_of(100)) << "then the epoch-2 newcomers, least recent first";
  // an older epoch than the entries': a new entry is the first to go
  t.c.set_global_epoch(0);
  t.put(key_of(108));
  t.c.set_global_epoch(2);
  EXPECT_EQ(t.put(key_of(109)), key_of(108));
}

// ---- epoch_lfu ----------------------------------------------------------------------------------
// Epoch 1's entries with counts 40..10 against epoch 2's with count 1: under epoch 2 the inserts
// evict epoch 1's first, smallest count first, then epoch 2's; a hit moves an entry to the
// current epoch and counts (HKV's update), so the hit key survives.
TEST(CacheScoreEpochLfu, OlderEpochGoesFirstWhateverItsCount) {
  WARPKV_TEST_EXECUTION(ex);
  two_buckets<cache_designs::optimistic_epoch_lfu> t(ex);
  const std::vector<std::uint64_t> keys = first_keys(8);
  t.c.set_global_epoch(1);
  for (std::size_t i = 0; i < 4; ++i) t.put(keys[i], 40 - 10 * i);  // counts 40, 30, 20, 10
  t.c.set_global_epoch(2);
  for (std::size_t i = 4; i < 8; ++i) t.put(keys[i]);  // count 1
  auto s = t.scores();
  EXPECT_EQ(s.at(keys[2]), (1ull << 32) | 20);
  EXPECT_EQ(s.at(keys[5]), (2ull << 32) | 1);
  EXPECT_TRUE(t.hit(keys[0]));
  EXPECT_EQ(t.scores().at(keys[0]), (2ull << 32) | 41) << "a hit counts and takes the current epoch";
  EXPECT_EQ(t.put(key_of(100), 5), keys[3]);
  EXPECT_EQ(t.put(key_of(101), 5), keys[2]);
  EXPECT_EQ(t.put(key_of(102), 5), keys[1]);
  // then a count-1 entry of epoch 2 (ties: any of them), never the hit key (41) or a newcomer (5)
  const std::uint64_t gone = t.put(key_of(103), 5);
  EXPECT_TRUE(gone == keys[4] || gone == keys[5] || gone == keys[6] || gone == keys[7]) << gone;
  // the count saturates at 2^32 - 1 without touching the epoch
  auto k = on(ex, std::vector<std::uint64_t>{keys[0]});
  auto big = on(ex, std::vector<std::uint64_t>{low32 - 5});
  t.c.assign(1, k.data(), nullptr, big.data());
  EXPECT_TRUE(t.hit(keys[0]));
  EXPECT_EQ(t.scores().at(keys[0]), (2ull << 32) | low32);
}

// ---- custom -------------------------------------------------------------------------------------
// The caller's scores are stored as given, exported as given, unchanged by hits, and the smallest
// is evicted; the HKV calls that insert refuse a null `scores`.
TEST(CacheScoreCustom, EvictsTheSmallestScoreAndExportsIt) {
  WARPKV_TEST_EXECUTION(ex);
  two_buckets<cache_designs::optimistic_custom> t(ex);
  const std::vector<std::uint64_t> given{50, 10, 80, 30, 70, 20, 60, 40};
  std::map<std::uint64_t, std::uint64_t> expect;
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(t.put(key_of(i + 1), given[i]), 0u);
    expect[key_of(i + 1)] = given[i];
  }
  EXPECT_EQ(t.scores(), expect);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_TRUE(t.hit(key_of(i + 1)));
  EXPECT_EQ(t.scores(), expect) << "hits change no score";
  std::uint64_t ev_score = 0;
  EXPECT_EQ(t.put(key_of(100), 45, &ev_score), key_of(2));
  EXPECT_EQ(ev_score, 10u);
  EXPECT_EQ(t.put(key_of(101), 5, &ev_score), key_of(6)) << "the smallest resident score, not the newcomer's";
  EXPECT_EQ(ev_score, 20u);
  EXPECT_EQ(t.put(key_of(102), 100), key_of(101));
  EXPECT_EQ(t.put(key_of(2), 1), key_of(4)) << "a re-insert of an evicted key";
  // an assignment stores the new score (insert_or_assign, assign)
  auto k = on(ex, std::vector<std::uint64_t>{key_of(1)});
  auto v = on(ex, std::vector<std::uint64_t>{7});
  auto sc = on(ex, std::vector<std::uint64_t>{3});
  t.c.insert_or_assign(1, k.data(), v.data(), sc.data());
  EXPECT_EQ(t.scores().at(key_of(1)), 3u);
  auto sc2 = on(ex, std::vector<std::uint64_t>{90});
  t.c.assign(1, k.data(), nullptr, sc2.data());
  EXPECT_EQ(t.scores().at(key_of(1)), 90u);
  // null scores: refused by name, nothing changes
  const auto kept = t.scores();
  buffer<std::uint64_t> evk(1, ex);
  auto k9 = on(ex, std::vector<std::uint64_t>{key_of(9)});
  expect_invalid([&] { t.c.insert_or_assign(1, k9.data(), v.data()); }, "scores");
  expect_invalid([&] { t.c.insert_and_evict(1, k9.data(), v.data(), evk.data()); }, "scores");
  expect_invalid([&] { t.c.find_or_insert(1, k9.data(), v.data()); }, "scores");
  EXPECT_EQ(t.scores(), kept);
  EXPECT_EQ(t.c.insert_or_assign(0, nullptr, nullptr).count, batch_summary{}.count);
}

// ---- designs, save / load ---------------------------------------------------------------------
TEST(CacheScoreDesigns, FixedDesignsOnlyAndTheirNames) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 4, 4, cache_designs::optimistic_lfu> lfu({.capacity = 64, .eviction = cache_eviction_policy::lfu}, ex);
  EXPECT_EQ(lfu.config().eviction, cache_eviction_policy::lfu);
  kv_cache<std::uint64_t, 4, 4, cache_designs::optimistic_custom> custom({.capacity = 64}, ex);
  EXPECT_EQ(custom.config().eviction, cache_eviction_policy::custom);
  static_assert(kv_cache<std::uint64_t, 4, 4, cache_designs::optimistic_epoch_lfu>::ref_type::eviction() ==
                cache_eviction_policy::epoch_lfu);
  static_assert(kv_cache<std::uint64_t, 4, 4, cache_designs::optimistic_epoch_lru>::ref_type::takes_scores == false);
  static_assert(kv_cache<std::uint64_t>::ref_type::takes_scores == false);
  expect_invalid([&] { kv_cache<std::uint64_t> c({.capacity = 64, .eviction = cache_eviction_policy::lfu}, ex); }, "design");
  expect_invalid(
      [&] { kv_cache<std::uint64_t, 4, 4, cache_designs::by_config> c({.capacity = 64, .eviction = cache_eviction_policy::custom}, ex); },
      "eviction");
  expect_invalid(
      [&] { kv_cache<std::uint64_t, 4, 4, cache_designs::by_config> c({.capacity = 64, .eviction = cache_eviction_policy{9}}, ex); },
      "eviction");
  // the recency designs ignore insert scores (HKV's kLru): the stamp is stored
  kv_cache<std::uint64_t, 4, 4> lru(cache_config{8, 8}, ex);
  auto k = on(ex, std::vector<std::uint64_t>{key_of(1)});
  auto sc = on(ex, std::vector<std::uint64_t>{~0ull});
  lru.insert_or_assign(1, k.data(), k.data(), sc.data());
  buffer<std::uint64_t> keys(8, ex), scores(8, ex);
  ASSERT_EQ(lru.export_batch(8, 0, keys.data(), nullptr, scores.data()), 1u);
  EXPECT_LT(back(scores)[0], lru.reserve_stamps(0));
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "warpkv_scores_" + std::to_string(::getpid()) + "_" + name;
}

// A file saved by an lfu or custom cache gives its scores to a loading cache of the same policy.
TEST(CacheScoreSave, LfuAndCustomKeepTheirScores) {
  WARPKV_TEST_EXECUTION(ex);
  two_buckets<cache_designs::optimistic_lfu> a(ex);
  two_buckets<cache_designs::optimistic_custom> c(ex);
  for (std::uint64_t id = 1; id <= 6; ++id) {
    a.put(key_of(id), id * 3);
    c.put(key_of(id), 1000 - id);
  }
  const std::string pa = temp_path("lfu"), pc = temp_path("custom");
  a.c.save(pa);
  c.c.save(pc);
  two_buckets<cache_designs::optimistic_lfu> a2(ex);
  two_buckets<cache_designs::optimistic_custom> c2(ex);
  EXPECT_EQ(a2.c.load(pa), 6u);
  EXPECT_EQ(c2.c.load(pc), 6u);
  EXPECT_EQ(a2.scores(), a.scores());
  EXPECT_EQ(c2.scores(), c.scores());
  std::remove(pa.c_str());
  std::remove(pc.c_str());
}

}  // namespace
}  // namespace warpkv::testing
