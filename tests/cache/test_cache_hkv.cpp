// kv_cache under HierarchicalKV's names (issue 25, item 3): insert_or_assign, find,
// find_or_insert, contains, erase against a sequential model (batches of distinct keys, so that
// the result does not depend on the order a backend runs a batch in), their argument checks and
// their stream argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "../common/backend.hpp"
#include "../common/backend_arrays.hpp"
#include "../common/expect_invalid.hpp"
#include "warpkv/cache/kv_cache.hpp"

namespace warpkv::testing {
namespace {

template <class Key, int W, int T = (W < 8 ? W : 8)>
using hkv_cache = kv_cache<Key, W, T, cache_designs::by_config>;

std::vector<bool> back_bools(const buffer<bool>& b) {
  std::unique_ptr<bool[]> h(new bool[b.size()]);
  b.copy_to_host(h.get(), b.size());
  return std::vector<bool>(h.get(), h.get() + b.size());
}

/// Key id -> the cache's key (never the sentinel).
std::uint64_t key_of(std::uint64_t id) { return id * 0x9e3779b97f4a7c15ull % 0xfffffffffffull + 1; }
/// The value words of (key, version): every word depends on both.
void value_of(std::uint64_t key, std::uint64_t version, std::uint64_t* w, std::size_t words) {
  for (std::size_t j = 0; j < words; ++j) w[j] = fmix64(key * 31 + version * 0x9e3779b97f4a7c15ull + j);
}

std::size_t scaled_count(std::size_t n) {
  return std::max<std::size_t>(n / 10, static_cast<std::size_t>(static_cast<double>(n) * test_scale()));
}

cache_config config_for(int seed, std::size_t capacity, std::size_t value_bytes) {
  cache_config cfg;
  cfg.capacity = capacity;
  cfg.value_bytes = value_bytes;
  constexpr cache_eviction_policy policies[] = {cache_eviction_policy::lru, cache_eviction_policy::random,
                                                cache_eviction_policy::clock};
  cfg.eviction = policies[seed % 3];
  cfg.sync = seed % 2 == 0 ? cache_slot_sync::optimistic : cache_slot_sync::rw_lock;
  cfg.layout = seed % 4 == 1 ? cache_layout::inline_values : cache_layout::value_slab;
  cfg.key_digests = seed % 5 == 2;
  cfg.seed = static_cast<std::uint64_t>(seed) * 77 + 1;
  return cfg;
}

/// A batch of n distinct keys of ids [1, range], each with the next version and its value.
struct batch_of_keys {
  std::vector<std::uint64_t> keys, versions, values;
};
batch_of_keys distinct_batch(std::mt19937_64& rng, std::size_t n, std::size_t range, std::size_t words,
                             std::uint64_t& version) {
  std::set<std::uint64_t> pick;
  while (pick.size() < n) pick.insert(key_of(1 + rng() % range));
  batch_of_keys b{std::vector<std::uint64_t>(pick.begin(), pick.end()), std::vector<std::uint64_t>(n),
                  std::vector<std::uint64_t>(n * words)};
  for (std::size_t i = 0; i < n; ++i) {
    b.versions[i] = version++;
    value_of(b.keys[i], b.versions[i], &b.values[i * words], words);
  }
  return b;
}

// ---- step 1: the names over the existing operations --------------------------------------------
// A cache loaded to at most a quarter (no eviction: size() is checked against the model after
// every batch), batches of distinct keys, each batch one call.
TEST(CacheHkvNames, MatchASequentialModel) {
  WARPKV_TEST_EXECUTION(ex);
  for (int seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed + 40);
    hkv_cache<std::uint64_t, 8> cache(config_for(seed, 1024, seed % 2 == 0 ? 24 : 8), ex);
    const std::size_t words = cache.value_stride() / 8;
    const std::size_t key_range = cache.capacity() / 4;
    std::map<std::uint64_t, std::uint64_t> model;  // key -> version
    std::uint64_t version = 1;
    for (int b = 0; b < 60; ++b) {
      const std::size_t n = 1 + rng() % 100;
      const auto [keys, versions, values] = distinct_batch(rng, n, key_range, words, version);
      auto d_keys = on(ex, keys);
      auto d_values = on(ex, values);
      buffer<status> d_st(n, ex);
      buffer<bool> d_found(n, ex);
      const int call = static_cast<int>(rng() % 5);
      batch_summary sum;
      switch (call) {
        case 0: sum = cache.insert_or_assign(n, d_keys.data(), d_values.data(), nullptr, d_st.data(), ex.stream); break;
        case 1: sum = cache.find(n, d_keys.data(), d_values.data(), d_found.data(), d_st.data()); break;
        case 2: sum = cache.find_or_insert(n, d_keys.data(), d_values.data(), nullptr, d_found.data(), d_st.data()); break;
        case 3: sum = cache.contains(n, d_keys.data(), d_found.data(), d_st.data()); break;
        default: sum = cache.erase(n, d_keys.data(), d_st.data()); break;
      }
      const auto st = back(d_st);
      const auto out = back(d_values);
      const auto found = back_bools(d_found);
      batch_summary expect;
      for (std::size_t i = 0; i < n; ++i) {
        const auto it = model.find(keys[i]);
        const bool present = it != model.end();
        std::vector<std::uint64_t> want(words);
        status s = status::not_found;
        switch (call) {
          case 0:
            s = present ? status::assigned : status::inserted;
            model[keys[i]] = versions[i];
            value_of(keys[i], versions[i], want.data(), words);
            break;
          case 1:
          case 3:
            s = present ? status::found : status::not_found;
            value_of(keys[i], present ? it->second : versions[i], want.data(), words);  // a miss leaves the input
            break;
          case 2:
            s = present ? status::found : status::inserted;
            if (!present) model[keys[i]] = versions[i];
            value_of(keys[i], model[keys[i]], want.data(), words);  // the stored value, either way
            break;
          default:
            s = present ? status::erased : status::not_found;
            model.erase(keys[i]);
            value_of(keys[i], versions[i], want.data(), words);
            break;
        }
        ++expect.count[static_cast<int>(s)];
        ASSERT_EQ(st[i], s) << "call " << call << " op " << i;
        if (call == 1 || call == 2 || call == 3) {
          EXPECT_EQ(found[i], s == status::found) << i;
        }
        if (call != 3) {
          EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + static_cast<std::ptrdiff_t>(i * words)))
              << "call " << call << " op " << i;
        }
      }
      EXPECT_EQ(sum.count, expect.count);
      ASSERT_EQ(cache.size(), model.size()) << "no entry evicted at a quarter's load";
    }
  }
}

TEST(CacheHkvNames, BadArgumentsNameTheArgumentAndChangeNothing) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 4> cache(cache_config{64, 8}, ex);
  auto keys = on(ex, std::vector<std::uint64_t>{key_of(1), key_of(2)});
  auto values = on(ex, std::vector<std::uint64_t>{5, 6});
  buffer<bool> found(2, ex);
  cache.insert_or_assign(2, keys.data(), values.data());
  expect_invalid([&] { cache.insert_or_assign(2, nullptr, values.data()); }, "keys");
  expect_invalid([&] { cache.insert_or_assign(2, keys.data(), nullptr); }, "values");
  expect_invalid([&] { cache.find(2, keys.data(), nullptr); }, "values_out");
  expect_invalid([&] { cache.find_or_insert(2, nullptr, values.data()); }, "keys");
  expect_invalid([&] { cache.contains(2, keys.data(), nullptr); }, "founds");
  expect_invalid([&] { cache.erase(2, nullptr); }, "keys");
  expect_invalid([&] { cache.insert_and_evict(2, keys.data(), values.data(), nullptr); }, "evicted_keys");
  // n = 0: nothing to read, null is fine
  EXPECT_EQ(cache.insert_or_assign(0, nullptr, nullptr).count, batch_summary{}.count);
  EXPECT_EQ(cache.erase(0, nullptr).count, batch_summary{}.count);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.contains(2, keys.data(), found.data())[status::found], 2u);
  // a sentinel key is answered, never stored
  auto bad = on(ex, std::vector<std::uint64_t>{~0ull});
  buffer<status> st(1, ex);
  cache.insert_or_assign(1, bad.data(), values.data(), nullptr, st.data());
  EXPECT_EQ(back(st)[0], status::invalid_key);
  EXPECT_EQ(cache.size(), 2u);
}

// ---- step 2: insert_and_evict -------------------------------------------------------------------
/// Inserts fresh keys [first, first + count) in batches by insert_and_evict and checks each
/// report: evicted keys were given before (or in the same batch) and never reported before, with
/// the value they were given; a batch reports exactly the inserts that did not grow the cache
/// (single-threaded only: `exact`; else an evicted key is one of key ids [1, all_ids], given by
/// any thread). Adds the reported keys to `evicted`.
template <class Cache>
void insert_and_account(Cache& cache, std::uint64_t first, std::uint64_t count, std::uint64_t seed, bool exact,
                        std::set<std::uint64_t>& evicted, const std::set<std::uint64_t>* all_keys = nullptr) {
  const execution& ex = cache.exec();
  const std::size_t words = cache.value_stride() / 8;
  std::mt19937_64 rng(seed);
  std::set<std::uint64_t> given;
  for (std::uint64_t id = first; id < first + count;) {
    const std::size_t n = std::min<std::uint64_t>(1 + rng() % 300, first + count - id);
    std::vector<std::uint64_t> keys(n), values(n * words);
    for (std::size_t i = 0; i < n; ++i, ++id) {
      keys[i] = key_of(id);
      value_of(keys[i], 1, &values[i * words], words);
      given.insert(keys[i]);
    }
    auto d_keys = on(ex, keys);
    auto d_values = on(ex, values);
    buffer<std::uint64_t> ev_keys(n, ex), ev_values(n * words, ex), ev_scores(n, ex);
    buffer<status> st(n, ex);
    const std::size_t before = exact ? cache.size() : 0;
    const std::uint64_t stamp_limit = cache.reserve_stamps(0) + n + 2;  // every stamp handed out so far, and this batch's
    const std::size_t got = cache.insert_and_evict(n, d_keys.data(), d_values.data(), ev_keys.data(), ev_values.data(),
                                                   ev_scores.data(), nullptr, st.data());
    ASSERT_LE(got, n);
    const auto sts = back(st);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(sts[i], status::inserted) << i;
    if (exact) {
      EXPECT_EQ(got, n - (cache.size() - before)) << "every insert that did not grow the cache evicted exactly one entry";
    }
    const auto k = back(ev_keys), v = back(ev_values), sc = back(ev_scores);
    for (std::size_t e = 0; e < got; ++e) {
      ASSERT_TRUE((exact ? given : *all_keys).count(k[e]) != 0) << "evicted a key never given: " << k[e];
      ASSERT_TRUE(evicted.insert(k[e]).second) << "key " << k[e] << " reported twice";
      std::vector<std::uint64_t> want(words);
      value_of(k[e], 1, want.data(), words);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), v.begin() + static_cast<std::ptrdiff_t>(e * words))) << k[e];
      if (cache.config().eviction == cache_eviction_policy::clock) {
        EXPECT_LE(sc[e], 1u);  // the reference bit
      } else {
        EXPECT_GE(sc[e], 1u);  // the stamp of a write or a hit of this cache
        if (exact) {
          EXPECT_LT(sc[e], stamp_limit);  // racing threads take stamps meanwhile
        }
      }
    }
  }
}

/// After inserting `ids` keys: the cache's entries and the reported evictions are every key
/// given, each once.
template <class Cache>
void expect_every_key_accounted(const Cache& cache, std::uint64_t ids, const std::set<std::uint64_t>& evicted) {
  const auto e = cache.export_entries();
  std::set<std::uint64_t> held(e.keys.begin(), e.keys.end());
  ASSERT_EQ(held.size(), e.keys.size()) << "a key stored twice";
  EXPECT_EQ(held.size(), cache.size());
  for (const std::uint64_t k : held) EXPECT_EQ(evicted.count(k), 0u) << "key " << k << " both held and reported evicted";
  EXPECT_EQ(held.size() + evicted.size(), ids) << "every key given is held or was reported evicted";
  for (std::uint64_t id = 1; id <= ids; ++id) {
    const std::uint64_t k = key_of(id);
    ASSERT_TRUE(held.count(k) != 0 || evicted.count(k) != 0) << "key " << k << " lost";
  }
}

TEST(CacheHkvEvict, EveryEvictedEntryIsAccounted) {
  WARPKV_TEST_EXECUTION(ex);
  for (int seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    cache_config cfg = config_for(seed, 128, 24);
    cfg.max_kicks = seed % 3 == 2 ? 0 : 5000;
    hkv_cache<std::uint64_t, 4> cache(cfg, ex);
    const std::uint64_t ids = cache.capacity() * 12;
    std::set<std::uint64_t> evicted;
    insert_and_account(cache, 1, ids, 500 + static_cast<std::uint64_t>(seed), true, evicted);
    EXPECT_GT(evicted.size(), 0u);
    expect_every_key_accounted(cache, ids, evicted);
  }
}

TEST(CacheHkvEvict, RacingThreadsAccountForEveryEntry) {
  WARPKV_TEST_EXECUTION(ex);
  for (int seed = 0; seed < 2; ++seed) {
    SCOPED_TRACE(seed);
    hkv_cache<std::uint64_t, 8> cache(config_for(seed, 256, 16), ex);
    constexpr int threads = 4;
    const std::uint64_t per_thread = static_cast<std::uint64_t>(scaled_count(2000));
    std::vector<std::set<std::uint64_t>> evicted(threads);
    std::set<std::uint64_t> all_keys;
    for (std::uint64_t id = 1; id <= per_thread * threads; ++id) all_keys.insert(key_of(id));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        insert_and_account(cache, 1 + static_cast<std::uint64_t>(t) * per_thread, per_thread, 900 + static_cast<std::uint64_t>(t),
                           false, evicted[static_cast<std::size_t>(t)], &all_keys);
      });
    for (auto& th : pool) th.join();
    std::set<std::uint64_t> all;
    std::size_t reports = 0;
    for (const auto& e : evicted) {
      reports += e.size();
      all.insert(e.begin(), e.end());
    }
    EXPECT_EQ(all.size(), reports) << "an entry reported by two threads";
    expect_every_key_accounted(cache, per_thread * threads, all);
  }
}

// ---- step 3: assign, accum_or_assign -----------------------------------------------------------
TEST(CacheHkvAssign, UpdatesOnlyPresentKeys) {
  WARPKV_TEST_EXECUTION(ex);
  for (int seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed + 70);
    hkv_cache<std::uint64_t, 8> cache(config_for(seed, 1024, 16), ex);
    const std::size_t words = cache.value_stride() / 8;
    std::map<std::uint64_t, std::uint64_t> model;
    std::uint64_t version = 1;
    for (int b = 0; b < 30; ++b) {
      const std::size_t n = 1 + rng() % 80;
      const auto [keys, versions, values] = distinct_batch(rng, n, 200, words, version);
      auto d_keys = on(ex, keys);
      auto d_values = on(ex, values);
      buffer<status> d_st(n, ex);
      const bool assign = b % 2 == 1;
      const batch_summary sum = assign ? cache.assign(n, d_keys.data(), d_values.data(), nullptr, d_st.data())
                                       : cache.insert_or_assign(n / 3 + 1, d_keys.data(), d_values.data(), nullptr, d_st.data());
      const auto st = back(d_st);
      std::size_t assigned = 0;
      for (std::size_t i = 0; i < (assign ? n : n / 3 + 1); ++i) {
        const bool present = model.count(keys[i]) != 0;
        if (assign) {
          ASSERT_EQ(st[i], present ? status::assigned : status::not_found) << i;
          if (present) model[keys[i]] = versions[i];
          assigned += present ? 1 : 0;
        } else {
          model[keys[i]] = versions[i];
        }
      }
      if (assign) {
        EXPECT_EQ(sum[status::assigned], assigned);
      }
      ASSERT_EQ(cache.size(), model.size()) << "assign never inserts";
    }
    // every value is the model's
    std::vector<std::uint64_t> keys;
    for (const auto& [k, v] : model) keys.push_back(k);
    auto d_keys = on(ex, keys);
    buffer<std::uint64_t> d_out(keys.size() * words, ex);
    EXPECT_EQ(cache.find(keys.size(), d_keys.data(), d_out.data())[status::found], keys.size());
    const auto out = back(d_out);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::vector<std::uint64_t> want(words);
      value_of(keys[i], model[keys[i]], want.data(), words);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), out.begin() + static_cast<std::ptrdiff_t>(i * words))) << i;
    }
  }
}

// Two buckets under lru: the candidates are the whole table and the victim is the smallest score,
// so scores given by assign decide what the next insert evicts.
TEST(CacheHkvAssign, ScoresDecideTheLruVictim) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 4, 4> cache(cache_config{8, 8}, ex);
  ASSERT_EQ(cache.capacity(), 8u);
  std::vector<std::uint64_t> keys, values;
  for (std::uint64_t id = 1; id <= 8; ++id) {
    keys.push_back(key_of(id));
    values.push_back(id);
  }
  auto d_keys = on(ex, keys);
  auto d_values = on(ex, values);
  cache.insert_or_assign(8, d_keys.data(), d_values.data());
  ASSERT_EQ(cache.size(), 8u);
  // key 0 is the oldest by insertion; a high score keeps it, score 0 makes key 5 the victim
  auto d_pick = on(ex, std::vector<std::uint64_t>{keys[0], keys[5]});
  auto d_scores = on(ex, std::vector<std::uint64_t>{1ull << 40, 0});
  buffer<status> st(2, ex);
  EXPECT_EQ(cache.assign(2, d_pick.data(), nullptr, d_scores.data(), st.data())[status::assigned], 2u);
  auto d_new = on(ex, std::vector<std::uint64_t>{key_of(100)});
  auto d_new_value = on(ex, std::vector<std::uint64_t>{100});
  buffer<std::uint64_t> ev_key(1, ex), ev_value(1, ex), ev_score(1, ex);
  ASSERT_EQ(cache.insert_and_evict(1, d_new.data(), d_new_value.data(), ev_key.data(), ev_value.data(), ev_score.data()), 1u);
  EXPECT_EQ(back(ev_key)[0], keys[5]);
  EXPECT_EQ(back(ev_value)[0], 6u) << "the value assign left";
  EXPECT_EQ(back(ev_score)[0], 0u) << "the score assign gave";
}

/// Deltas of small integers: float sums are exact in any order, so a batch's result (and racing
/// threads') does not depend on the order its operations ran in.
std::vector<std::uint64_t> deltas_of(const std::vector<float>& f) {
  std::vector<std::uint64_t> w((f.size() + 1) / 2);
  std::memcpy(w.data(), f.data(), f.size() * sizeof(float));
  return w;
}

/// Every key of the model is found in the cache with the model's vector of `dim` floats.
template <class Cache>
void expect_finds_model_vectors(Cache& cache, const std::map<std::uint64_t, std::vector<float>>& model, std::size_t dim,
                                const execution& ex) {
  std::vector<std::uint64_t> keys;
  for (const auto& [k, v] : model) keys.push_back(k);
  auto d_keys = on(ex, keys);
  buffer<std::uint64_t> d_out(keys.size() * cache.value_stride() / 8, ex);
  cache.find(keys.size(), d_keys.data(), d_out.data());
  const auto out = back(d_out);
  std::vector<float> got(dim);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(got.data(), out.data() + i * cache.value_stride() / 8, dim * sizeof(float));
    for (std::size_t j = 0; j < dim; ++j) ASSERT_EQ(got[j], model.at(keys[i])[j]) << "key " << i << " element " << j;
  }
}

TEST(CacheHkvAccum, AddsToPresentKeysAndInsertsTheRest) {
  WARPKV_TEST_EXECUTION(ex);
  constexpr std::size_t dim = 6;  // 24-byte values: 3 words of 2 floats
  for (int seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed + 90);
    hkv_cache<std::uint64_t, 8> cache(config_for(seed, 1024, dim * sizeof(float)), ex);
    std::map<std::uint64_t, std::vector<float>> model;
    for (int b = 0; b < 25; ++b) {
      const std::size_t n = 1 + rng() % 120;  // keys may repeat within a batch
      std::vector<std::uint64_t> keys(n);
      std::vector<float> f(n * dim);
      for (std::size_t i = 0; i < n; ++i) {
        keys[i] = key_of(1 + rng() % 150);
        for (std::size_t j = 0; j < dim; ++j) f[i * dim + j] = static_cast<float>(static_cast<int>(rng() % 201) - 100);
      }
      std::set<std::uint64_t> fresh;
      for (std::size_t i = 0; i < n; ++i) {
        if (model.count(keys[i]) == 0) fresh.insert(keys[i]);
        auto& m = model[keys[i]];
        m.resize(dim, 0.0f);
        for (std::size_t j = 0; j < dim; ++j) m[j] += f[i * dim + j];
      }
      auto d_keys = on(ex, keys);
      auto d_deltas = on(ex, deltas_of(f));
      buffer<status> st(n, ex);
      const batch_summary sum = cache.accum_or_assign(n, d_keys.data(), d_deltas.data(), st.data());
      EXPECT_EQ(sum[status::inserted], fresh.size()) << "one insert per key absent before the batch";
      EXPECT_EQ(sum[status::assigned], n - fresh.size());
      ASSERT_EQ(cache.size(), model.size());
    }
    expect_finds_model_vectors(cache, model, dim, ex);
  }
}

// HKV's accum_or_assigns flags: flag true accumulates into a live entry and leaves an absent key
// absent (not_found); flag false inserts an absent key and leaves a live one unchanged (found).
// Random batches of distinct keys against a sequential model, several seeds.
TEST(CacheHkvAccum, FlagsAccumulateOnlyPresentAndInsertOnlyAbsent) {
  WARPKV_TEST_EXECUTION(ex);
  constexpr std::size_t dim = 6;
  for (int seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed + 190);
    hkv_cache<std::uint64_t, 8> cache(config_for(seed, 1024, dim * sizeof(float)), ex);
    std::map<std::uint64_t, std::vector<float>> model;
    for (int b = 0; b < 25; ++b) {
      std::vector<std::uint64_t> keys;
      std::set<std::uint64_t> seen;
      const std::size_t want = 1 + rng() % 100;
      while (keys.size() < want) {
        const std::uint64_t k = key_of(1 + rng() % 150);
        if (seen.insert(k).second) keys.push_back(k);  // distinct: the model is sequential
      }
      const std::size_t n = keys.size();
      std::vector<float> f(n * dim);
      std::vector<std::uint8_t> flags(n);
      for (std::size_t i = 0; i < n; ++i) {
        flags[i] = static_cast<std::uint8_t>(rng() % 2);
        for (std::size_t j = 0; j < dim; ++j) f[i * dim + j] = static_cast<float>(static_cast<int>(rng() % 201) - 100);
      }
      std::vector<status> expect(n);
      for (std::size_t i = 0; i < n; ++i) {
        const bool live = model.count(keys[i]) != 0;
        if (flags[i] != 0 && live) {
          for (std::size_t j = 0; j < dim; ++j) model[keys[i]][j] += f[i * dim + j];
          expect[i] = status::assigned;
        } else if (flags[i] != 0) {
          expect[i] = status::not_found;
        } else if (!live) {
          model[keys[i]].assign(f.begin() + static_cast<std::ptrdiff_t>(i * dim), f.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
          expect[i] = status::inserted;
        } else {
          expect[i] = status::found;
        }
      }
      auto d_keys = on(ex, keys);
      auto d_deltas = on(ex, deltas_of(f));
      auto d_flags = on(ex, flags);
      buffer<status> st(n, ex);
      cache.accum_or_assign(n, d_keys.data(), d_deltas.data(), reinterpret_cast<const bool*>(d_flags.data()), st.data());
      const auto got = back(st);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], expect[i]) << "operation " << i << " flag " << int(flags[i]);
      ASSERT_EQ(cache.size(), model.size());
    }
    expect_finds_model_vectors(cache, model, dim, ex);
  }
}

// The flags with one key many times in a batch: accumulations into a live key are all applied
// (small integers: exact in any order); inserts of an absent key: exactly one inserted, the
// others found, and the stored vector is one of theirs.
TEST(CacheHkvAccum, FlagsWithHotKeysLoseNoDeltaAndInsertOnce) {
  WARPKV_TEST_EXECUTION(ex);
  hkv_cache<std::uint64_t, 8> cache(config_for(3, 1024, 2 * sizeof(float)), ex);
  const std::uint64_t live = key_of(7), absent = key_of(8);
  {
    auto k = on(ex, std::vector<std::uint64_t>{live});
    auto v = on(ex, deltas_of({10.0f, 20.0f}));
    auto fl = on(ex, std::vector<std::uint8_t>{0});
    cache.accum_or_assign(1, k.data(), v.data(), reinterpret_cast<const bool*>(fl.data()));
  }
  const std::size_t copies = 64;
  std::vector<std::uint64_t> keys;
  std::vector<float> f;
  std::vector<std::uint8_t> flags;
  for (std::size_t i = 0; i < copies; ++i) {
    keys.push_back(live), flags.push_back(1), f.push_back(1.0f), f.push_back(static_cast<float>(i));
    keys.push_back(absent), flags.push_back(0), f.push_back(static_cast<float>(i)), f.push_back(-static_cast<float>(i));
  }
  auto d_keys = on(ex, keys);
  auto d_f = on(ex, deltas_of(f));
  auto d_fl = on(ex, flags);
  buffer<status> st(keys.size(), ex);
  const batch_summary sum =
      cache.accum_or_assign(keys.size(), d_keys.data(), d_f.data(), reinterpret_cast<const bool*>(d_fl.data()), st.data());
  EXPECT_EQ(sum[status::assigned], copies);
  EXPECT_EQ(sum[status::inserted], 1u);
  EXPECT_EQ(sum[status::found], copies - 1);
  auto q = on(ex, std::vector<std::uint64_t>{live, absent});
  buffer<std::uint64_t> d_out(2 * cache.value_stride() / 8, ex);
  cache.find(2, q.data(), d_out.data());
  const auto out = back(d_out);
  float a[2], b[2];
  std::memcpy(a, out.data(), sizeof a);
  std::memcpy(b, out.data() + cache.value_stride() / 8, sizeof b);
  EXPECT_EQ(a[0], 10.0f + static_cast<float>(copies));
  EXPECT_EQ(a[1], 20.0f + static_cast<float>(copies * (copies - 1) / 2));
  EXPECT_EQ(b[1], -b[0]) << "one insert's vector, whole";
}

TEST(CacheHkvAccum, RacingThreadsLoseNoDelta) {
  WARPKV_TEST_EXECUTION(ex);
  for (const cache_slot_sync sync : {cache_slot_sync::optimistic, cache_slot_sync::rw_lock}) {
    cache_config cfg = config_for(0, 512, 2 * sizeof(double));
    cfg.sync = sync;
    hkv_cache<std::uint64_t, 8> cache(cfg, ex);
    constexpr int threads = 4;
    constexpr std::size_t keys_n = 16;  // hot keys: every batch of every thread meets the others
    const std::size_t batches = scaled_count(40);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<std::uint64_t> keys(64);
        std::vector<double> d(keys.size() * 2);
        for (std::size_t i = 0; i < keys.size(); ++i) {
          keys[i] = key_of(1 + i % keys_n);
          d[2 * i] = 1.0;
          d[2 * i + 1] = static_cast<double>(t + 1);
        }
        std::vector<std::uint64_t> w(d.size());
        std::memcpy(w.data(), d.data(), d.size() * sizeof(double));
        auto d_keys = on(ex, keys);
        auto d_w = on(ex, w);
        for (std::size_t b = 0; b < batches; ++b) cache.accum_or_assign<double>(keys.size(), d_keys.data(), d_w.data());
      });
    for (auto& th : pool) th.join();
    std::vector<std::uint64_t> keys;
    for (std::size_t i = 0; i < keys_n; ++i) keys.push_back(key_of(1 + i));
    auto d_keys = on(ex, keys);
    buffer<std::uint64_t> d_out(keys_n * 2, ex);
    ASSERT_EQ(cache.find(keys_n, d_keys.data(), d_out.data())[status::found], keys_n);
    const auto out = back(d_out);
    const double per_key = static_cast<double>(64 / keys_n * batches);
    for (std::size_t i = 0; i < keys_n; ++i) {
      double got[2];
      std::memcpy(got, out.data() + 2 * i, sizeof got);
      EXPECT_EQ(got[0], per_key * threads) << i;
      EXPECT_EQ(got[1], per_key * (1 + 2 + 3 + 4)) << i;
    }
  }
}

TEST(CacheHkvAccum, BadArguments) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 4> odd(cache_config{64, 6}, ex);  // 6 bytes: not whole floats
  auto keys = on(ex, std::vector<std::uint64_t>{key_of(1)});
  auto w = on(ex, std::vector<std::uint64_t>{0});
  expect_invalid([&] { odd.accum_or_assign(1, keys.data(), w.data()); }, "value_bytes");
  kv_cache<std::uint64_t, 4> c(cache_config{64, 8}, ex);
  expect_invalid([&] { c.accum_or_assign(1, keys.data(), nullptr); }, "deltas");
  expect_invalid([&] { c.accum_or_assign(1, keys.data(), w.data(), static_cast<const bool*>(nullptr)); }, "accum_or_assigns");
  expect_invalid([&] { c.accum_or_assign<double>(1, nullptr, w.data()); }, "keys");
  expect_invalid([&] { c.assign(1, keys.data(), nullptr, nullptr); }, "values");
  EXPECT_EQ(c.size(), 0u);
}

// ---- step 4: export_batch, export_batch_if, erase_if -------------------------------------------
/// A key predicate (device-callable, as a user's would be): odd keys.
struct odd_key {
  WARPKV_HD bool operator()(std::uint64_t k, std::uint64_t) const { return k % 2 == 1; }
};

/// Every entry the pages of export_batch_if(pred) give, paging by `page` slots: key -> (value
/// words, score); fails on a key given twice.
template <class Cache, class Pred>
std::map<std::uint64_t, std::pair<std::vector<std::uint64_t>, std::uint64_t>> export_pages(const Cache& cache, const Pred& pred,
                                                                                           std::size_t page) {
  const execution& ex = cache.exec();
  const std::size_t words = cache.value_stride() / 8;
  std::map<std::uint64_t, std::pair<std::vector<std::uint64_t>, std::uint64_t>> got;
  buffer<std::uint64_t> keys(page, ex), values(page * words, ex), scores(page, ex);
  for (std::size_t offset = 0; offset < cache.capacity(); offset += page) {
    const std::size_t n = cache.export_batch_if(pred, page, offset, keys.data(), values.data(), scores.data());
    EXPECT_LE(n, std::min(page, cache.capacity() - offset));
    const auto k = back(keys), v = back(values), sc = back(scores);
    for (std::size_t e = 0; e < n; ++e) {
      std::vector<std::uint64_t> w(v.begin() + static_cast<std::ptrdiff_t>(e * words),
                                   v.begin() + static_cast<std::ptrdiff_t>((e + 1) * words));
      EXPECT_TRUE(got.emplace(k[e], std::make_pair(w, sc[e])).second) << "key " << k[e] << " exported twice";
    }
  }
  return got;
}

TEST(CacheHkvExport, PagesScoresAndPredicatesMatchTheModel) {
  WARPKV_TEST_EXECUTION(ex);
  for (int seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed + 110);
    hkv_cache<std::uint64_t, 8> cache(config_for(seed, 512, 16), ex);
    const std::size_t words = cache.value_stride() / 8;
    // 150 keys, each with the score 1000 + its id (assign's scores), 20 more that expire
    std::vector<std::uint64_t> keys, values, scores;
    for (std::uint64_t id = 1; id <= 150; ++id) {
      keys.push_back(key_of(id));
      values.resize(keys.size() * words);
      value_of(keys.back(), id, &values[(keys.size() - 1) * words], words);
      scores.push_back(1000 + id);
    }
    auto d_keys = on(ex, keys);
    auto d_values = on(ex, values);
    auto d_scores = on(ex, scores);
    cache.insert_or_assign(keys.size(), d_keys.data(), d_values.data());
    ASSERT_EQ(cache.assign(keys.size(), d_keys.data(), nullptr, d_scores.data())[status::assigned], keys.size());
    std::vector<std::uint64_t> short_lived;
    for (std::uint64_t id = 151; id <= 170; ++id) short_lived.push_back(key_of(id));
    std::vector<status> st(short_lived.size());
    cache.set(short_lived, std::vector<std::byte>(short_lived.size() * cache.value_stride()), st, nullptr,
              std::vector<std::uint64_t>(short_lived.size(), 10));
    cache.set_time(20);  // those have expired: never exported
    ASSERT_EQ(cache.size(), keys.size());
    const std::size_t page = 1 + rng() % 97;  // any page size, not only whole buckets
    const auto all = export_pages(cache, cache_all_entries{}, page);
    ASSERT_EQ(all.size(), keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto it = all.find(keys[i]);
      ASSERT_NE(it, all.end()) << "key " << keys[i] << " not exported";
      EXPECT_TRUE(std::equal(it->second.first.begin(), it->second.first.end(), values.begin() + static_cast<std::ptrdiff_t>(i * words)));
      EXPECT_EQ(it->second.second, scores[i]);
    }
    // export_batch pages the same way as export_batch_if(all)
    buffer<std::uint64_t> one_page(cache.capacity(), ex);
    EXPECT_EQ(cache.export_batch(cache.capacity(), 0, one_page.data()), keys.size());
    EXPECT_EQ(cache.export_batch(10, cache.capacity(), one_page.data()), 0u);
    // predicates on the score and on the key
    const std::uint64_t threshold = 1000 + 1 + rng() % 150;
    const auto below = export_pages(cache, cache_score_below{threshold}, page);
    const auto odd = export_pages(cache, odd_key{}, page);
    std::size_t want_below = 0, want_odd = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(below.count(keys[i]), scores[i] < threshold ? 1u : 0u) << i;
      EXPECT_EQ(odd.count(keys[i]), keys[i] % 2) << i;
      want_below += scores[i] < threshold ? 1 : 0;
      want_odd += keys[i] % 2;
    }
    EXPECT_EQ(below.size(), want_below);
    EXPECT_EQ(odd.size(), want_odd);
    // erase_if: exactly the matching entries go
    EXPECT_EQ(cache.erase_if(cache_score_below{threshold}), want_below);
    EXPECT_EQ(cache.size(), keys.size() - want_below);
    buffer<bool> found(keys.size(), ex);
    cache.contains(keys.size(), d_keys.data(), found.data());
    const auto f = back_bools(found);
    for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(f[i], scores[i] >= threshold) << i;
    EXPECT_EQ(cache.erase_if(cache_score_below{threshold}), 0u);
    EXPECT_EQ(cache.erase_if(cache_score_at_least{0}), keys.size() - want_below);
    EXPECT_EQ(cache.size(), 0u);
    // the slots erased are free again: the cache fills to capacity without an eviction
    std::vector<std::uint64_t> refill;
    for (std::uint64_t id = 1000; refill.size() < cache.capacity() / 2; ++id) refill.push_back(key_of(id));
    auto d_refill = on(ex, refill);
    buffer<std::uint64_t> d_zero(refill.size() * words, ex), ev(refill.size(), ex);
    EXPECT_EQ(cache.insert_and_evict(refill.size(), d_refill.data(), d_zero.data(), ev.data()), 0u);
    EXPECT_EQ(cache.size(), refill.size());
  }
}

TEST(CacheHkvExport, EraseIfBesideRacingWriters) {
  WARPKV_TEST_EXECUTION(ex);
  hkv_cache<std::uint64_t, 8> cache(config_for(1, 1024, 8), ex);
  std::atomic<bool> done{false};
  const std::size_t batches = scaled_count(60);
  std::thread writer([&] {
    std::vector<std::uint64_t> keys(50), values(50, 7);
    for (std::size_t b = 0; b < batches; ++b) {
      for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = key_of(1 + (b * keys.size() + i) % 400);
      auto d_keys = on(ex, keys);
      auto d_values = on(ex, values);
      cache.insert_or_assign(keys.size(), d_keys.data(), d_values.data());
    }
    done = true;
  });
  std::size_t erased = 0;
  while (!done) erased += cache.erase_if(odd_key{});
  writer.join();
  erased += cache.erase_if(odd_key{});
  buffer<std::uint64_t> out(cache.capacity(), ex);
  const std::size_t n = cache.export_batch(cache.capacity(), 0, out.data());
  EXPECT_EQ(n, cache.size());
  const auto keys = back(out);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(keys[i] % 2, 0u) << "an odd key survived the last erase_if";
  EXPECT_EQ(cache.erase_if(cache_all_entries{}), n);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_GT(erased, 0u);
}

TEST(CacheHkvExport, BadArguments) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 4> c(cache_config{64, 8}, ex);
  buffer<std::uint64_t> k(8, ex);
  expect_invalid([&] { (void)c.export_batch(8, 0, nullptr); }, "keys_out");
  expect_invalid([&] { (void)c.export_batch(8, c.capacity() + 1, k.data()); }, "offset");
  EXPECT_EQ(c.export_batch(0, 0, nullptr), 0u);
}

// ---- step 5: save / load ------------------------------------------------------------------------
std::string temp_file(const std::string& name) {
  return ::testing::TempDir() + "warpkv_hkv_" + std::to_string(::getpid()) + "_" + name;
}
std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
/// A cache's entries as key -> (value bytes, expiry time), for comparing caches.
template <class Cache>
std::map<std::uint64_t, std::pair<std::vector<std::byte>, std::uint64_t>> contents(const Cache& c) {
  const auto e = c.export_entries();
  std::map<std::uint64_t, std::pair<std::vector<std::byte>, std::uint64_t>> m;
  for (std::size_t i = 0; i < e.keys.size(); ++i) {
    std::uint64_t w[cache_key_layout<typename Cache::key_type>::words];
    cache_key_layout<typename Cache::key_type>::to_words(e.keys[i], w);
    const auto* v = e.values.data() + i * c.value_stride();
    m[cache_key_layout<typename Cache::key_type>::hash(w, 5)] = {std::vector<std::byte>(v, v + c.value_stride()), e.expires_at[i]};
  }
  return m;
}
/// Fills `c` with `n` entries of the span API (values of `value_of`), every fifth expiring at 1000.
template <class Cache>
void fill(Cache& c, std::size_t n, std::uint64_t first = 1) {
  using Key = typename Cache::key_type;
  const std::size_t words = c.value_stride() / 8;
  std::vector<Key> keys;
  std::vector<std::uint64_t> w(n * words), exp;
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Key, std::uint64_t>) keys.push_back(key_of(first + i));
    else keys.push_back(Key::from("user" + std::to_string(first + i)));
    value_of(first + i, 3, &w[i * words], words);
    exp.push_back(i % 5 == 0 ? 1000 : 0);
  }
  std::vector<std::byte> bytes(w.size() * 8);
  std::memcpy(bytes.data(), w.data(), bytes.size());
  std::vector<status> st(n);
  c.set(keys, bytes, st, nullptr, exp);
}

TEST(CacheHkvSave, RoundTripsEntriesAcrossDesigns) {
  WARPKV_TEST_EXECUTION(ex);
  for (int seed = 0; seed < 4; ++seed) {
    SCOPED_TRACE(seed);
    hkv_cache<std::uint64_t, 8> a(config_for(seed, 512, 20), ex);
    fill(a, 300);
    const std::string path = temp_file("roundtrip");
    a.save(path);
    hkv_cache<std::uint64_t, 8> b(config_for(seed + 1, 600, 20), ex);  // another design and size
    fill(b, 50, 5000);                                                // replaced by the load
    EXPECT_EQ(b.load(path), a.size());
    EXPECT_EQ(contents(b), contents(a));
    b.set_time(1000);  // expiry times travelled along
    EXPECT_EQ(b.size(), a.size() - 60);
    std::remove(path.c_str());
  }
  // byte-string keys, and an empty cache
  hkv_cache<byte_key<32>, 8> a(config_for(0, 256, 8), ex);
  fill(a, 100);
  const std::string path = temp_file("bytes");
  a.save(path);
  hkv_cache<byte_key<32>, 8> b(config_for(2, 256, 8), ex);
  EXPECT_EQ(b.load(path), 100u);
  EXPECT_EQ(contents(b), contents(a));
  a.clear();
  a.save(path);
  EXPECT_EQ(b.load(path), 0u);
  EXPECT_EQ(b.size(), 0u);
  std::remove(path.c_str());
}

// A two-bucket lru cache is exact LRU: loading 20 entries into its 8 slots keeps the 8 the saver
// used last (entries go in by ascending saved score).
TEST(CacheHkvSave, LoadKeepsTheRecencyOrder) {
  WARPKV_TEST_EXECUTION(ex0);
  execution ex = ex0;
  ex.host_tiles = 1;  // one tile: the load batch runs in order
  kv_cache<std::uint64_t, 4, 4> a(cache_config{64, 8}, ex);
  std::vector<std::uint64_t> keys, values;
  for (std::uint64_t id = 1; id <= 20; ++id) {
    keys.push_back(key_of(id));
    values.push_back(id);
  }
  auto d_keys = on(ex, keys);
  auto d_values = on(ex, values);
  a.insert_or_assign(20, d_keys.data(), d_values.data());
  // use keys 3, 7, 11, ..., 19 and 0 again: they are the most recent
  std::vector<std::uint64_t> hot{keys[3], keys[7], keys[11], keys[15], keys[19], keys[0], keys[2], keys[4]};
  for (const std::uint64_t k : hot) {
    auto d = on(ex, std::vector<std::uint64_t>{k});
    buffer<std::uint64_t> out(1, ex);
    a.find(1, d.data(), out.data());
  }
  const std::string path = temp_file("recency");
  a.save(path);
  kv_cache<std::uint64_t, 4, 4> b(cache_config{8, 8}, ex);
  ASSERT_EQ(b.capacity(), 8u);
  EXPECT_EQ(b.load(path), 20u);
  const auto e = b.export_entries();
  EXPECT_EQ(std::set<std::uint64_t>(e.keys.begin(), e.keys.end()), std::set<std::uint64_t>(hot.begin(), hot.end()));
  std::remove(path.c_str());
}

TEST(CacheHkvSave, BadFilesAreNamedAndChangeNothing) {
  WARPKV_TEST_EXECUTION(ex);
  hkv_cache<std::uint64_t, 8> a(config_for(0, 256, 24), ex);
  fill(a, 100);
  const std::string good = temp_file("good"), bad = temp_file("bad");
  a.save(good);
  const std::vector<char> image = read_file(good);
  ASSERT_EQ(image.size(), 48u + 100u * (8 + 24 + 16) + 8u);
  hkv_cache<std::uint64_t, 8> c(config_for(1, 256, 24), ex);
  fill(c, 40, 7000);
  const auto before = contents(c);
  auto expect_refused = [&](auto&& load, const std::string& problem) {
    SCOPED_TRACE(problem);
    try {
      load();
      ADD_FAILURE() << "no error";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("'path'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
    EXPECT_EQ(contents(c), before) << "a refused load changed the cache";
  };
  auto with = [&](std::vector<char> bytes, const std::string& problem) {
    write_file(bad, bytes);
    expect_refused([&] { c.load(bad); }, problem);
  };
  expect_refused([&] { c.load(temp_file("missing")); }, "cannot open");
  std::vector<char> b = image;
  b[0] = 'X';
  with(b, "bad magic");
  b = image;
  b[8] = 2;
  with(b, "unsupported version 2");
  with(std::vector<char>(image.begin(), image.end() - 20), "truncated");
  with(std::vector<char>(image.begin(), image.begin() + 30), "truncated");
  with({}, "truncated");
  b = image;
  b.insert(b.end() - 8, 48, 0);  // one entry more than the header says
  with(b, "trailing bytes");
  b = image;
  b[48 + 8 + 3] ^= 1;  // a bit of the first entry's value
  with(b, "checksum mismatch");
  b = image;
  b[b.size() - 1] ^= 1;  // the checksum itself
  with(b, "checksum mismatch");
  b = image;
  b[41] = 1;  // a count of 356: more than the file holds
  with(b, "truncated");
  hkv_cache<std::uint64_t, 8> wide(config_for(0, 256, 32), ex);
  expect_refused([&] { wide.load(good); }, "value size mismatch");
  hkv_cache<byte_key<32>, 8> bytes(config_for(0, 256, 24), ex);
  expect_refused([&] { bytes.load(good); }, "key size mismatch");
  // the good file still loads
  EXPECT_EQ(c.load(good), 100u);
  EXPECT_EQ(contents(c), contents(a));
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace warpkv::testing
