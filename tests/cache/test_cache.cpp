// kv_cache: a sequential model fed by the cache's own eviction reports (exact where one tile runs
// the operations in order), exact LRU where the table has two buckets, expiry, export/import,
// eviction under load, bad input, racing tiles on hot keys (every value carries its key, its
// writer and a checksum of its words, so a torn or wrong value fails; each batch is checked per
// key for linearizability with evictions as the cache's only forgetting), and the host submitter.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <list>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "../common/backend.hpp"
#include "warpkv/core/fault_injection.hpp"
#include "../common/expect_invalid.hpp"
#include "../common/linearizability.hpp"
#include "warpkv/cache/kv_cache.hpp"
#include "warpkv/cache/submitter.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/work_sharing.hpp"

namespace warpkv::testing {
namespace {

/// A cache whose design comes from cache_config at run time (the tests cycle through designs).
template <class Key, int W, int T = (W < 8 ? W : 8)>
using config_cache = kv_cache<Key, W, T, cache_designs::by_config>;

// ---- keys and self-checking values ------------------------------------------------------------
template <class Key>
Key key_of(std::uint64_t id) {
  if constexpr (std::is_same_v<Key, std::uint64_t>) {
    return id * 0x9e3779b97f4a7c15ull % 0xfffffffffffull + 1;
  } else {
    return Key::from("user" + std::to_string(id * 7919 + 13));  // YCSB-like, up to 24 bytes
  }
}
template <class Key>
std::uint64_t key_id_bits(const Key& k) {
  if constexpr (std::is_same_v<Key, std::uint64_t>) {
    return k;
  } else {
    std::uint64_t w[cache_key_layout<Key>::words];
    cache_key_layout<Key>::to_words(k, w);
    return cache_key_layout<Key>::hash(w, 99);
  }
}

/// Value of (key, version): word 0 the key's bits, word 1 the version, then words derived from
/// both, and the last word a checksum of all the others: bytes from two writes never check out.
void make_value(std::uint64_t key_bits, std::uint64_t version, std::uint64_t* w, std::size_t words) {
  std::uint64_t sum = 0;
  for (std::size_t j = 0; j < words; ++j) {
    if (j == 0) w[j] = key_bits;
    else if (j == 1) w[j] = version;
    else if (j + 1 == words) w[j] = sum;
    else w[j] = fmix64(key_bits ^ (version * 0x9e3779b97f4a7c15ull) ^ j);
    if (j + 1 < words) sum = fmix64(sum ^ w[j]);
  }
}
/// The version a value carries, or ~0 when it is not a consistent value of `key_bits`.
std::uint64_t check_value(std::uint64_t key_bits, const std::uint64_t* w, std::size_t words) {
  std::vector<std::uint64_t> expect(words);
  make_value(key_bits, words > 1 ? w[1] : 0, expect.data(), words);
  return std::equal(expect.begin(), expect.end(), w) ? (words > 1 ? w[1] : 0) : ~0ull;
}

template <class Cache>
std::vector<std::byte> values_for(const Cache& c, const std::vector<typename Cache::key_type>& keys,
                                  const std::vector<std::uint64_t>& versions) {
  const std::size_t words = c.value_stride() / 8;
  std::vector<std::uint64_t> w(keys.size() * words);
  for (std::size_t i = 0; i < keys.size(); ++i) make_value(key_id_bits(keys[i]), versions[i], &w[i * words], words);
  std::vector<std::byte> out(w.size() * 8);
  std::memcpy(out.data(), w.data(), out.size());
  return out;
}
const std::uint64_t* words_at(const std::vector<std::byte>& v, std::size_t i, std::size_t stride) {
  return reinterpret_cast<const std::uint64_t*>(v.data() + i * stride);
}

std::size_t scaled(std::size_t n, std::size_t at_least = 1) {
  return std::max<std::size_t>(at_least, static_cast<std::size_t>(static_cast<double>(n) * test_scale()));
}

// ---- looking at the table from the host (host backend, between batches) ----------------------
/// Whether bucket b of ref's table holds key k.
template <class Ref>
bool bucket_holds(const Ref& ref, std::size_t b, const typename Ref::key_type& k) {
  constexpr std::size_t W = Ref::bucket_width;
  for (std::size_t s = b * W; s < b * W + W; ++s)
    if (!ref.slot_empty(s) && ref.slot_key(s) == k) return true;
  return false;
}
/// Whether bucket b of ref's table has an empty slot.
template <class Ref>
bool bucket_has_room(const Ref& ref, std::size_t b) {
  constexpr std::size_t W = Ref::bucket_width;
  for (std::size_t s = b * W; s < b * W + W; ++s)
    if (ref.slot_empty(s)) return true;
  return false;
}

// ---- sequential model from the cache's own eviction reports ------------------------------
template <class Cache>
class CacheModel : public ::testing::Test {};
using ModelCaches = ::testing::Types<config_cache<std::uint64_t, 4, 1>, config_cache<std::uint64_t, 8, 2>,
                                     config_cache<byte_key<32>, 4, 1>, config_cache<std::uint64_t, 16, 1>,
                                     // the score policies (fixed designs: the config's design fields give way)
                                     kv_cache<std::uint64_t, 4, 1, cache_designs::optimistic_lfu>,
                                     kv_cache<std::uint64_t, 8, 2, cache_designs::optimistic_epoch_lru>,
                                     kv_cache<std::uint64_t, 4, 1, cache_designs::optimistic_epoch_lfu>,
                                     kv_cache<std::uint64_t, 4, 1, cache_designs::optimistic_custom>,
                                     // one bucket per key (HierarchicalKV's placement): key words read
                                     // strided (W 32 T 4), digests a word per lane (W 16 T 2)
                                     kv_cache<std::uint64_t, 32, 4, cache_designs::one_bucket_lru>,
                                     kv_cache<byte_key<32>, 16, 2,
                                              cache_design<detail::optimistic_slots, detail::clock_eviction,
                                                           detail::inline_values, detail::digest_keys, detail::one_bucket>>,
                                     kv_cache<std::uint64_t, 8, 4,
                                              cache_design<detail::rw_lock_slots, detail::random_eviction,
                                                           detail::value_slab, detail::plain_keys, detail::one_bucket>>>;
/// cfg as a cache of type Cache takes it: a fixed design's own fields in place of the cycled ones.
template <class Cache>
cache_config for_design(cache_config cfg) {
  if constexpr (std::is_same_v<typename Cache::design, cache_designs::by_config>) return cfg;
  else return Cache::design::applied(cfg);
}
TYPED_TEST_SUITE(CacheModel, ModelCaches);

// One tile serves the batch in index order, so the cache is a deterministic sequential object:
// a key is present exactly when the model says so (evictions are reported), a hit returns the
// latest value, and size() matches.
TYPED_TEST(CacheModel, MatchesModelWithReportedEvictions) {
  using Cache = TypeParam;
  using Key = typename Cache::key_type;
  WARPKV_TEST_EXECUTION(ex0);
  execution ex = ex0;
  ex.host_tiles = 1;
  const int seeds = static_cast<int>(scaled(6, 2));
  for (int seed = 0; seed < seeds; ++seed) {
    std::mt19937_64 rng(1000 + seed);
    cache_config cfg;
    cfg.capacity = 16 + rng() % 200;
    cfg.value_bytes = seed % 2 == 0 ? 100 : 32;
    cfg.max_kicks = seed % 3 == 0 ? 0 : 5000;
    constexpr cache_eviction_policy policies[] = {cache_eviction_policy::lru, cache_eviction_policy::random,
                                                  cache_eviction_policy::clock};
    cfg.eviction = policies[(seed / 2) % 3];
    cfg.sync = seed % 2 == 0 ? cache_slot_sync::optimistic : cache_slot_sync::rw_lock;
    cfg.layout = seed % 3 == 1 ? cache_layout::inline_values : cache_layout::value_slab;
    cfg.key_digests = seed % 4 == 1 || seed % 4 == 2;  // both sync modes, also at the reduced scale
    cfg.seed = rng();
    Cache cache(for_design<Cache>(cfg), ex);
    const std::size_t words = cache.value_stride() / 8;
    const std::size_t key_range = cache.capacity() * (1 + rng() % 3);
    std::map<std::uint64_t, std::uint64_t> model;  // key id -> version
    std::uint64_t version = 1;
    const std::size_t batches = scaled(40, 8);
    for (std::size_t b = 0; b < batches; ++b) {
      const std::size_t n = 1 + rng() % 64;
      std::vector<cache_op> ops(n);
      std::vector<Key> keys(n);
      std::vector<std::uint64_t> ids(n), versions(n);
      for (std::size_t i = 0; i < n; ++i) {
        const unsigned r = rng() % 100;
        ops[i] = r < 35 ? cache_op::get : r < 65 ? cache_op::set : r < 75 ? cache_op::add : r < 83 ? cache_op::erase
                                                                  : r < 93 ? cache_op::get_or_set : cache_op::contains;
        ids[i] = 1 + rng() % key_range;
        keys[i] = key_of<Key>(ids[i]);
        versions[i] = version++;
      }
      const auto in = values_for(cache, keys, versions);
      std::vector<std::byte> out(n * cache.value_stride());
      std::vector<status> st(n);
      cache_evictions<Key> ev;
      // the order the model replays: one host tile runs a batch's read phase (gets, contains and
      // the get_or_sets of keys present when the batch begins) in index order, then the other
      // operations in index order (kv_cache::queue_batch); a GPU batch of one operation is its
      // own order
      auto in_read_phase = [&](std::size_t i) {
        return ops[i] == cache_op::get || ops[i] == cache_op::contains ||
               (ops[i] == cache_op::get_or_set && model.count(ids[i]) != 0);
      };
      std::vector<std::size_t> order(n);
      std::iota(order.begin(), order.end(), std::size_t{0});
      if (ex.where == backend::host) {
        std::stable_partition(order.begin(), order.end(), in_read_phase);
        cache.execute(ops, keys, in, out, st, &ev);
      } else {
        // the GPU runs a batch's operations concurrently: one operation per batch keeps the order
        const std::size_t stride = cache.value_stride();
        for (std::size_t i = 0; i < n; ++i) {
          cache_evictions<Key> one;
          cache.execute(std::span(ops).subspan(i, 1), std::span(keys).subspan(i, 1),
                        std::span(in).subspan(i * stride, stride), std::span(out).subspan(i * stride, stride),
                        std::span(st).subspan(i, 1), &one);
          for (std::size_t e = 0; e < one.keys.size(); ++e) {
            ev.op_index.push_back(i);
            ev.keys.push_back(one.keys[e]);
            ev.values.insert(ev.values.end(), one.values.begin() + static_cast<std::ptrdiff_t>(e * stride),
                             one.values.begin() + static_cast<std::ptrdiff_t>((e + 1) * stride));
          }
        }
      }
      std::size_t next_ev = 0;  // evictions come from the write phase only: in index order
      for (const std::size_t i : order) {
        const bool present = model.count(ids[i]) != 0;
        const std::uint64_t kb = key_id_bits(keys[i]);
        switch (ops[i]) {
          case cache_op::get:
          case cache_op::contains:
            ASSERT_EQ(st[i], present ? status::found : status::not_found) << "op " << i << " batch " << b;
            if (present && ops[i] == cache_op::get) {
              ASSERT_EQ(check_value(kb, words_at(out, i, cache.value_stride()), words), model[ids[i]]);
            }
            break;
          case cache_op::erase:
            ASSERT_EQ(st[i], present ? status::erased : status::not_found);
            model.erase(ids[i]);
            break;
          case cache_op::set:
            ASSERT_EQ(st[i], present ? status::assigned : status::inserted);
            model[ids[i]] = versions[i];
            break;
          case cache_op::add:
            ASSERT_EQ(st[i], present ? status::found : status::inserted);
            if (!present) model[ids[i]] = versions[i];
            break;
          case cache_op::get_or_set:
            ASSERT_EQ(st[i], present ? status::found : status::inserted);
            if (!present) model[ids[i]] = versions[i];
            ASSERT_EQ(check_value(kb, words_at(out, i, cache.value_stride()), words), model[ids[i]]);
            break;
        }
        if (next_ev < ev.op_index.size() && ev.op_index[next_ev] == i) {
          ASSERT_NE(st[i], status::assigned) << "an assignment never evicts";
          // the evicted key was present, with its latest value, and is now gone
          const Key gone = ev.keys[next_ev];
          std::uint64_t gone_id = 0;
          bool known = false;
          for (const auto& [id, ver] : model)
            if (key_of<Key>(id) == gone) {
              gone_id = id;
              known = true;
              break;
            }
          ASSERT_TRUE(known) << "evicted a key that was not present";
          ASSERT_NE(gone_id, ids[i]);
          ASSERT_EQ(check_value(key_id_bits(gone), words_at(ev.values, next_ev, cache.value_stride()), words),
                    model[gone_id]);
          // it was one of the new key's two buckets' entries
          const auto p = cache.with_ref([&](const auto& r) { return r.buckets_of(keys[i]); });
          const auto q = cache.with_ref([&](const auto& r) { return r.buckets_of(gone); });
          ASSERT_TRUE(q.first == p.first || q.first == p.second || q.second == p.first || q.second == p.second);
          model.erase(gone_id);
          ++next_ev;
        }
      }
      ASSERT_EQ(next_ev, ev.op_index.size());
      ASSERT_LE(model.size(), cache.capacity());
      ASSERT_EQ(cache.size(), model.size());
    }
  }
}

// ---- exact LRU where every key's candidates are the whole table -----------------------
// Random eviction (the seed's "random CHT") still evicts exactly one present entry per insert
// into a full table, and over many inserts does not always pick the least recently used one.
TEST(CacheLru, RandomPolicyEvictsSomeoneElse) {
  WARPKV_TEST_EXECUTION(ex0);
  execution ex = ex0;
  ex.host_tiles = 1;
  cache_config cfg;
  cfg.capacity = 8;
  cfg.value_bytes = 8;
  cfg.eviction = cache_eviction_policy::random;
  config_cache<std::uint64_t, 4, 1> cache(cfg, ex);
  std::list<std::uint64_t> lru;
  int not_lru = 0;
  for (std::uint64_t k = 1; k <= 200; ++k) {
    std::vector<std::uint64_t> keys{k};
    std::vector<std::byte> v(8);
    std::vector<status> st(1);
    cache_evictions<std::uint64_t> ev;
    cache.set(keys, v, st, &ev);
    ASSERT_EQ(st[0], status::inserted);
    if (lru.size() == 8) {
      ASSERT_EQ(ev.keys.size(), 1u);
      ASSERT_NE(std::find(lru.begin(), lru.end(), ev.keys[0]), lru.end()) << "evicted an absent key";
      if (ev.keys[0] != lru.back()) ++not_lru;
      lru.remove(ev.keys[0]);
    } else {
      ASSERT_TRUE(ev.keys.empty());
    }
    lru.push_front(k);
  }
  EXPECT_GT(not_lru, 50);
  EXPECT_EQ(cache.size(), 8u);
}

TEST(CacheLru, TwoBucketsAreExactLru) {
  WARPKV_TEST_EXECUTION(ex0);
  execution ex = ex0;
  ex.host_tiles = 1;
  for (int seed = 0; seed < static_cast<int>(scaled(10, 3)); ++seed) {
    std::mt19937_64 rng(seed);
    cache_config cfg;
    cfg.capacity = 8;  // 2 buckets of 4: each key's two buckets are the table
    cfg.value_bytes = 8;
    cfg.seed = rng();
    cfg.sync = seed % 2 == 0 ? cache_slot_sync::optimistic : cache_slot_sync::rw_lock;
    config_cache<std::uint64_t, 4, 1> cache(cfg, ex);
    std::list<std::uint64_t> lru;  // front = most recent
    auto touch = [&](std::uint64_t k) {
      lru.remove(k);
      lru.push_front(k);
    };
    auto has = [&](std::uint64_t k) { return std::find(lru.begin(), lru.end(), k) != lru.end(); };
    for (int step = 0; step < static_cast<int>(scaled(400, 100)); ++step) {
      const std::uint64_t k = 1 + rng() % 20;
      const int what = static_cast<int>(rng() % 3);
      std::vector<std::uint64_t> keys{k};
      std::vector<std::uint64_t> val{k * 10};
      std::vector<std::byte> bytes(8), out(8);
      std::memcpy(bytes.data(), val.data(), 8);
      std::vector<status> st(1);
      cache_evictions<std::uint64_t> ev;
      if (what == 0) {
        cache.get(keys, out, st);
        ASSERT_EQ(st[0] == status::found, has(k)) << "step " << step;
        if (has(k)) touch(k);
      } else if (what == 1) {
        cache.set(keys, bytes, st, &ev);
        if (!has(k) && lru.size() == 8) {
          ASSERT_EQ(ev.keys.size(), 1u) << "step " << step;
          ASSERT_EQ(ev.keys[0], lru.back()) << "not the least recently used, step " << step;
          lru.pop_back();
        } else {
          ASSERT_TRUE(ev.keys.empty());
        }
        touch(k);
      } else {
        cache.erase(keys, st);
        ASSERT_EQ(st[0] == status::erased, has(k));
        lru.remove(k);
      }
    }
  }
}

// Clock where every key's candidates are the whole table. The test knows some reference bits for
// certain: an entry referenced (set or hit) since the last eviction has its bit set (only an
// eviction's sweep clears bits); after a sweep that had to go all the way round (it evicted such
// an entry), every other bit is clear. So an eviction may take an entry known to be referenced
// only when no entry is known to be unreferenced. And the policy is not LRU.
TEST(CacheClock, EvictsAnUnreferencedEntryWhileThereIsOne) {
  WARPKV_TEST_EXECUTION(ex0);
  execution ex = ex0;
  ex.host_tiles = 1;
  int not_lru = 0, evictions = 0, full_sweeps = 0;
  for (int seed = 0; seed < static_cast<int>(scaled(10, 3)); ++seed) {
    std::mt19937_64 rng(100 + seed);
    cache_config cfg;
    cfg.capacity = 8;
    cfg.value_bytes = 8;
    cfg.seed = rng();
    cfg.eviction = cache_eviction_policy::clock;
    cfg.sync = seed % 2 == 0 ? cache_slot_sync::optimistic : cache_slot_sync::rw_lock;
    config_cache<std::uint64_t, 4, 1> cache(cfg, ex);
    std::list<std::uint64_t> lru;   // present keys, front = most recent
    std::set<std::uint64_t> set_bit, clear_bit;  // entries whose bit is known to be set / clear
    for (int step = 0; step < static_cast<int>(scaled(400, 100)); ++step) {
      const std::uint64_t k = 1 + rng() % 16;
      const bool present = std::find(lru.begin(), lru.end(), k) != lru.end();
      std::vector<std::uint64_t> keys{k};
      std::vector<std::byte> bytes(8), out(8);
      std::vector<status> st(1);
      if (rng() % 2 == 0) {
        cache.get(keys, out, st);
        ASSERT_EQ(st[0] == status::found, present) << "step " << step;
      } else {
        cache_evictions<std::uint64_t> ev;
        cache.set(keys, bytes, st, &ev);
        if (!present && lru.size() == 8) {
          ASSERT_EQ(ev.keys.size(), 1u) << "step " << step;
          const std::uint64_t gone = ev.keys[0];
          ASSERT_NE(std::find(lru.begin(), lru.end(), gone), lru.end()) << "evicted an absent key";
          if (set_bit.count(gone)) {  // the sweep found every bit set: it cleared them all
            ASSERT_TRUE(clear_bit.empty()) << "evicted a referenced entry while an unreferenced one was there, step "
                                           << step;
            ++full_sweeps;
            clear_bit.insert(lru.begin(), lru.end());
          }
          set_bit.clear();  // a sweep that stopped early cleared an unknown part of them
          if (gone != lru.back()) ++not_lru;
          ++evictions;
          lru.remove(gone);
          clear_bit.erase(gone);
        } else {
          ASSERT_TRUE(ev.keys.empty());
        }
        if (!present) lru.push_front(k);
      }
      if (std::find(lru.begin(), lru.end(), k) != lru.end()) {
        lru.remove(k);
        lru.push_front(k);
        set_bit.insert(k);
        clear_bit.erase(k);
      }
    }
  }
  EXPECT_GT(full_sweeps, 0);
  EXPECT_GT(evictions, 50);
  EXPECT_GT(not_lru, 0) << "clock made exactly LRU's choices";

  // a full sweep: 8 entries all referenced, a 9th evicts one and clears every bit; re-reference
  // all but one entry u: the 10th insert must take u
  for (const cache_slot_sync sync : {cache_slot_sync::optimistic, cache_slot_sync::rw_lock}) {
    cache_config cfg;
    cfg.capacity = 8;
    cfg.value_bytes = 8;
    cfg.eviction = cache_eviction_policy::clock;
    cfg.sync = sync;
    config_cache<std::uint64_t, 4, 1> cache(cfg, ex);
    std::vector<std::uint64_t> first{1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<status> st(8);
    cache.set(first, std::vector<std::byte>(64), st);
    std::vector<std::uint64_t> k9{9}, k10{10};
    std::vector<status> s1(1);
    cache_evictions<std::uint64_t> ev;
    cache.set(k9, std::vector<std::byte>(8), s1, &ev);
    ASSERT_EQ(ev.keys.size(), 1u);
    std::vector<std::uint64_t> rest;
    for (const std::uint64_t k : first)
      if (k != ev.keys[0]) rest.push_back(k);
    const std::uint64_t u = rest.back();
    rest.pop_back();
    std::vector<std::byte> out(rest.size() * 8);
    std::vector<status> sr(rest.size());
    cache.get(rest, out, sr);
    for (const status x : sr) ASSERT_EQ(x, status::found);
    cache.set(k10, std::vector<std::byte>(8), s1, &ev);
    ASSERT_EQ(ev.keys.size(), 1u);
    EXPECT_EQ(ev.keys[0], u) << "the only entry not referenced since the sweep";
  }
}

// ---- the seed's per-slot reader/writer lock ----------------------------------------------
// The seed releases a writer by atomicExch(word, 0). Replayed step by step: a reader adds 2 while
// the writer is inside (it will subtract it again), the writer releases, the reader subtracts:
// the word is -2, and then a reader and a writer are admitted together. The release used here
// (subtract 1) keeps the reader's +2 and admits only the reader.
TEST(CacheSlotLock, SeedReleaseLosesReaders) {
  for (const bool seed_release : {true, false}) {
    std::uint32_t word = 0;
    atomic_ref<std::uint32_t> w(word);
    ASSERT_TRUE(detail::try_write_lock_slot(word));
    ASSERT_EQ(w.fetch_add(2u) & 1u, 1u);  // a reader arrives, sees the writer
    if (seed_release) w.exchange(0u);     // the seed's release
    else detail::write_unlock_slot(word);
    w.fetch_sub(2u);  // the reader takes its +2 back
    const bool reader_in = detail::try_read_lock_slot(word);
    const bool writer_in = detail::try_write_lock_slot(word);
    if (seed_release) {
      EXPECT_EQ(word, 1u) << "the word went through -2";
      EXPECT_TRUE(reader_in && writer_in) << "the seed's release lets a writer in beside a reader";
    } else {
      EXPECT_TRUE(reader_in);
      EXPECT_FALSE(writer_in);
      detail::read_unlock_slot(word);
      EXPECT_EQ(word, 0u);
      EXPECT_TRUE(detail::try_write_lock_slot(word));
      EXPECT_FALSE(detail::try_read_lock_slot(word));
      EXPECT_EQ(word, 1u) << "a refused reader leaves the word as it was";
      detail::write_unlock_slot(word);
      EXPECT_EQ(word, 0u);
    }
  }
}

// Threads racing on one lock word guard two plain (non-atomic) words that writers keep equal:
// a reader inside never sees them differ, and ThreadSanitizer sees every access ordered by the
// lock (a broken acquire/release would be a reported data race).
TEST(CacheSlotLock, ExcludesWritersFromReaders) {
  std::uint32_t word = 0;
  std::uint64_t a = 0, b = 0;
  std::atomic<int> torn{0}, writes{0}, reads{0};
  const int rounds = static_cast<int>(scaled(4000, 400));
  std::vector<std::thread> pool;
  for (int th = 0; th < 4; ++th)
    pool.emplace_back([&, th] {
      for (int i = 0; i < rounds; ++i) {
        if ((i + th) % 4 == 0) {
          detail::write_lock_slot(word);
          a = a + 1;
          std::this_thread::yield();
          b = a;
          detail::write_unlock_slot(word);
          ++writes;
        } else {
          detail::read_lock_slot(word);
          const std::uint64_t x = a;
          std::this_thread::yield();
          if (b != x) ++torn;
          detail::read_unlock_slot(word);
          ++reads;
        }
      }
    });
  for (auto& t : pool) t.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a, static_cast<std::uint64_t>(writes.load()));
  EXPECT_EQ(word, 0u);
  EXPECT_GT(reads.load(), 0);
}

// ---- the fast write pass's one-lock path -----------------------------------------------------
// While the table is sparse, a batch's fast write pass holds its key's first bucket's lock alone
// (docs/design/cache.md, "One lock") and must still find the key in its second bucket, then take
// that lock too. Keys left in their second buckets by a nearly full table, three in four erased,
// the rest updated in one batch: every update assigns (none inserts a second copy into the first
// bucket, which has room now), the size stays, and each key reads its new value.
TEST(CacheOneLock, UpdatesFindKeysInTheirSecondBucket) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 1024;
  cfg.value_bytes = 24;
  kv_cache<std::uint64_t, 8, 8> cache(cfg, ex);
  const std::size_t n = 1000;  // ~98 % of the slots
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = key_of<std::uint64_t>(i + 1);
  for (std::size_t i = 0; i < n; i += 100) {
    std::vector<std::uint64_t> slice(keys.begin() + static_cast<std::ptrdiff_t>(i), keys.begin() + static_cast<std::ptrdiff_t>(i + 100));
    std::vector<status> st(slice.size());
    cache.set(slice, values_for(cache, slice, std::vector<std::uint64_t>(slice.size(), 1)), st);
  }
  std::vector<status> cs(n);
  cache.contains(keys, cs);
  std::vector<std::uint64_t> kept, dropped;
  for (std::size_t i = 0; i < n; ++i)
    if (cs[i] == status::found) (i % 4 == 0 ? kept : dropped).push_back(keys[i]);
  ASSERT_GT(kept.size(), 150u);
  std::vector<status> es(dropped.size());
  cache.erase(dropped, es);
  ASSERT_EQ(cache.size(), kept.size());
  if (ex.where == backend::host) {  // the case under test occurs: a key in its second bucket, its first with room
    const auto ref = cache.ref();
    std::size_t second = 0;
    for (const std::uint64_t k : kept) {
      const auto p = ref.buckets_of(k);
      second += bucket_holds(ref, p.second, k) && bucket_has_room(ref, p.first) ? 1 : 0;
    }
    ASSERT_GT(second, 0u);
  }
  std::vector<status> us(kept.size());
  cache.set(kept, values_for(cache, kept, std::vector<std::uint64_t>(kept.size(), 2)), us);
  for (std::size_t i = 0; i < kept.size(); ++i) ASSERT_EQ(us[i], status::assigned) << kept[i];
  EXPECT_EQ(cache.size(), kept.size());
  std::vector<std::byte> out(kept.size() * cache.value_stride());
  std::vector<status> gs(kept.size());
  cache.get(kept, out, gs);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    ASSERT_EQ(gs[i], status::found) << kept[i];
    EXPECT_EQ(check_value(key_id_bits(kept[i]), words_at(out, i, cache.value_stride()), cache.value_stride() / 8), 2u) << kept[i];
  }
}

// ---- expiry ------------------------------------------------------------------------------
// An insert into an empty slot without a TTL does not store the expiry word (the empty slot's is
// 0: write_slot's was_empty): every way a slot is emptied must leave 0 there, or the new entry
// would read as expired. Slots emptied by erase (of live and of expired entries) and by erase_if.
TEST(CacheExpiry, AnEmptiedSlotTakesANewEntryWithoutTheOldExpiry) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 16;
  cfg.value_bytes = 16;
  kv_cache<std::uint64_t, 4, 1> cache(cfg, ex);
  cache.set_time(100);
  std::vector<std::uint64_t> keys(16);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 1 + i;
  std::vector<status> st(keys.size());
  cache.set(keys, values_for(cache, keys, std::vector<std::uint64_t>(keys.size(), 1)), st, nullptr,
            std::vector<std::uint64_t>(keys.size(), 150));
  std::size_t held = 0;
  for (const status s : st) held += s == status::inserted ? 1 : 0;
  ASSERT_GT(held, 8u);
  // half erased while live, the rest after they expired (dropped), or by erase_if
  std::vector<std::uint64_t> first(keys.begin(), keys.begin() + 8), rest(keys.begin() + 8, keys.end());
  std::vector<status> s8(8);
  cache.erase(first, s8);
  cache.set_time(200);
  std::vector<status> s4(4);
  cache.erase(std::vector<std::uint64_t>(rest.begin(), rest.begin() + 4), s4);
  cache.erase_if(cache_score_at_least{0});  // every remaining entry
  EXPECT_EQ(cache.size(), 0u);
  // new keys, no TTL: each lands in an emptied slot and stays live at any time
  std::vector<std::uint64_t> fresh(8);
  for (std::size_t i = 0; i < fresh.size(); ++i) fresh[i] = 1000 + i;
  std::vector<status> sf(fresh.size());
  cache.set(fresh, values_for(cache, fresh, std::vector<std::uint64_t>(fresh.size(), 1)), sf);
  for (std::size_t i = 0; i < fresh.size(); ++i) ASSERT_EQ(sf[i], status::inserted) << fresh[i];
  cache.set_time(1000000);
  cache.contains(fresh, sf);
  for (std::size_t i = 0; i < fresh.size(); ++i) EXPECT_EQ(sf[i], status::found) << fresh[i];
  EXPECT_EQ(cache.size(), fresh.size());
}

TEST(CacheExpiry, ExpiredReadsAsMissAndGoesFirst) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 8;
  cfg.value_bytes = 16;
  kv_cache<std::uint64_t, 4, 1> cache(cfg, ex);
  cache.set_time(100);
  std::vector<std::uint64_t> keys{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::uint64_t> versions(8, 1);
  const auto vals = values_for(cache, keys, versions);
  std::vector<std::uint64_t> exp{0, 0, 150, 0, 0, 0, 0, 0};  // key 3 expires at time 150
  std::vector<status> st(8);
  cache.set(keys, vals, st, nullptr, exp);
  EXPECT_EQ(cache.size(), 8u);
  cache.set_time(150);
  EXPECT_EQ(cache.size(), 7u);
  std::vector<std::uint64_t> k3{3};
  std::vector<std::byte> out(16);
  std::vector<status> s1(1);
  cache.get(k3, out, s1);
  EXPECT_EQ(s1[0], status::not_found);
  // the full cache takes a new key by replacing the expired entry, evicting no live one
  std::vector<std::uint64_t> k9{9};
  cache_evictions<std::uint64_t> ev;
  cache.set(k9, values_for(cache, k9, {1}), s1, &ev);
  EXPECT_EQ(s1[0], status::inserted);
  EXPECT_TRUE(ev.keys.empty());
  std::vector<std::byte> all(8 * 16);
  std::vector<std::uint64_t> live{1, 2, 4, 5, 6, 7, 8, 9};
  cache.get(live, all, st);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(st[i], status::found) << live[i];
  // setting an expired key again counts as an insert
  cache.set_time(200);
  std::vector<std::uint64_t> k1{1};
  cache.set(k1, values_for(cache, k1, {2}), s1, nullptr, std::vector<std::uint64_t>{250});
  EXPECT_EQ(s1[0], status::assigned);
  cache.set_time(260);
  cache.contains(k1, s1);
  EXPECT_EQ(s1[0], status::not_found);
  cache.set(k1, values_for(cache, k1, {3}), s1);
  EXPECT_EQ(s1[0], status::inserted);
}

TEST(CacheExport, RoundTripsEveryLiveEntry) {
  WARPKV_TEST_EXECUTION(ex);
  for (const cache_layout layout : {cache_layout::value_slab, cache_layout::inline_values}) {
    SCOPED_TRACE(static_cast<int>(layout));
    cache_config cfg;
    cfg.capacity = 500;
    cfg.value_bytes = 100;
    cfg.layout = layout;
    config_cache<byte_key<32>, 8, 4> a(cfg, ex);
    std::vector<byte_key<32>> keys;
    std::vector<std::uint64_t> versions, exp;
    for (std::uint64_t i = 0; i < 300; ++i) {
      keys.push_back(key_of<byte_key<32>>(i));
      versions.push_back(i + 7);
      exp.push_back(i % 10 == 0 ? 50 : i % 10 == 1 ? 500 : 0);
    }
    std::vector<status> st(keys.size());
    a.set(keys, values_for(a, keys, versions), st, nullptr, exp);
    a.set_time(60);  // every tenth entry has expired
    const auto e = a.export_entries();
    EXPECT_EQ(e.keys.size(), 270u);
    EXPECT_EQ(a.size(), 270u);
    config_cache<byte_key<32>, 8, 4> b(cfg, ex);
    b.set_time(60);
    const auto ist = b.import_entries(e);
    for (const status s : ist) EXPECT_EQ(s, status::inserted);
    std::vector<std::byte> out(keys.size() * b.value_stride());
    b.get(keys, out, st);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i % 10 == 0) {
        EXPECT_EQ(st[i], status::not_found);
        continue;
      }
      ASSERT_EQ(st[i], status::found) << i;
      EXPECT_EQ(check_value(key_id_bits(keys[i]), words_at(out, i, b.value_stride()), b.value_stride() / 8), versions[i]);
    }
    b.set_time(500);  // expiry times travelled along
    EXPECT_EQ(b.size(), 240u);
  }
}

// ---- eviction under load -----------------------------------------------------------------
TEST(CacheEviction, SmallCacheEndsFullOfCorrectValues) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 256;
  cfg.value_bytes = 32;
  kv_cache<std::uint64_t, 4, 4> cache(cfg, ex);
  const std::size_t key_range = cache.capacity() * 10;  // capacity = 10% of the keys
  std::mt19937_64 rng(5);
  std::size_t evictions = 0, inserts = 0;
  for (std::size_t b = 0; b < scaled(30, 4); ++b) {
    std::vector<std::uint64_t> keys(512), versions(512);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      keys[i] = key_of<std::uint64_t>(1 + rng() % key_range);
      versions[i] = b;
    }
    std::vector<status> st(keys.size());
    cache_evictions<std::uint64_t> ev;
    cache.set(keys, values_for(cache, keys, versions), st, &ev);
    evictions += ev.keys.size();
    inserts += static_cast<std::size_t>(std::count(st.begin(), st.end(), status::inserted));
  }
  const auto e = cache.export_entries();
  EXPECT_EQ(e.keys.size(), cache.capacity());
  EXPECT_EQ(inserts - evictions, cache.capacity()) << "every insert beyond capacity evicted exactly one entry";
  std::set<std::uint64_t> unique(e.keys.begin(), e.keys.end());
  EXPECT_EQ(unique.size(), e.keys.size());
  for (std::size_t i = 0; i < e.keys.size(); ++i)
    ASSERT_NE(check_value(e.keys[i], words_at(e.values, i, cache.value_stride()), cache.value_stride() / 8), ~0ull);
}

// ---- bad input ---------------------------------------------------------------------------
/// f() throws a warpkv::error of this code.
template <class F>
void expect_error(F&& f, errc code) {
  try {
    f();
    ADD_FAILURE() << "no warpkv::error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

TEST(CacheBadInput, ClearErrorsAndNothingLost) {
  WARPKV_TEST_EXECUTION(ex);
  expect_error([&] { kv_cache<std::uint64_t> c(cache_config{0, 8}, ex); }, errc::invalid_argument);
  expect_error([&] { kv_cache<std::uint64_t> c(cache_config{8, 0}, ex); }, errc::invalid_argument);
  expect_error([&] { kv_cache<std::uint64_t> c(cache_config{8, max_value_bytes + 1}, ex); }, errc::invalid_argument);
  expect_error([] { (void)byte_key<32>::from(""); }, errc::invalid_argument);
  expect_error([] { (void)byte_key<32>::from(std::string(33, 'x')); }, errc::invalid_argument);

  cache_config cfg;
  cfg.capacity = 64;
  cfg.value_bytes = 32;
  kv_cache<std::uint64_t, 4, 1> c(cfg, ex);
  std::vector<std::uint64_t> keys{1, 2, 3};
  std::vector<status> st(3);
  c.set(keys, values_for(c, keys, {1, 1, 1}), st);
  const std::vector<std::byte> too_long(3 * 40);
  expect_error([&] { c.set(keys, too_long, st); }, errc::invalid_argument);
  std::vector<status> two(2);
  expect_error([&] { c.set(keys, std::vector<std::byte>(3 * 32), two); }, errc::invalid_argument);
  expect_error([&] { c.set(keys, std::vector<std::byte>(3 * 32), st, nullptr, std::vector<std::uint64_t>(2)); },
               errc::invalid_argument);
  const std::vector<cache_op> bad_ops{cache_op::get, static_cast<cache_op>(9), cache_op::get};
  std::vector<std::byte> out(3 * 32);
  expect_error([&] { c.execute(bad_ops, keys, {}, out, st); }, errc::invalid_argument);
  // sentinel keys: a status, and the cache is untouched
  std::vector<std::uint64_t> mixed{~0ull, 2};
  std::vector<status> st2(2);
  c.set(mixed, values_for(c, mixed, {5, 5}), st2);
  EXPECT_EQ(st2[0], status::invalid_key);
  EXPECT_EQ(st2[1], status::assigned);
  std::vector<byte_key<32>> bad(3);
  bad[0].length = 0;
  bad[1] = byte_key<32>::from("ok");
  bad[2] = byte_key<32>::from("abc");
  bad[2].length = 40;
  bad[1].words[3] = 1;  // bytes past the length must be zero
  kv_cache<byte_key<32>, 4, 1> bc(cfg, ex);
  bc.set(bad, std::vector<std::byte>(3 * 32), st);
  for (const status s : st) EXPECT_EQ(s, status::invalid_key);
  EXPECT_EQ(bc.size(), 0u);
  // nothing already cached was lost
  EXPECT_EQ(c.size(), 3u);
  c.get(keys, out, st);
  EXPECT_EQ(check_value(1, words_at(out, 0, 32), 4), 1u);
  EXPECT_EQ(check_value(2, words_at(out, 1, 32), 4), 5u);
  EXPECT_EQ(check_value(3, words_at(out, 2, 32), 4), 1u);
}

// ---- concurrency -------------------------------------------------------------------------
// A cache batch's per-key linearizability (tests/common/linearizability.hpp, with forgetting):
// values are versions (each op writes a version of its own), `versions_out[i]` the version a
// hit returned. A get_or_set that inserts must return its own value. `evicted` (key, version)
// lists every eviction of the batch when `reported`; else the cache may have forgotten any key
// at any instant. Returns the first violation.
std::optional<std::string> check_cache_batch(const std::vector<cache_op>& ops, const std::vector<std::uint64_t>& keys,
                                             const std::vector<std::uint64_t>& versions, const std::vector<status>& st,
                                             const std::vector<std::uint64_t>& versions_out,
                                             const std::vector<std::pair<std::uint64_t, std::uint64_t>>& evicted,
                                             bool reported, const std::unordered_map<std::uint64_t, std::uint64_t>& before,
                                             const std::unordered_map<std::uint64_t, std::uint64_t>& after) {
  std::map<std::uint64_t, key_history<std::uint64_t>> histories;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    key_history<std::uint64_t>& h = histories[keys[i]];
    const status s = st[i];
    const bool hit = s == status::found, miss = s == status::not_found;
    bool ok = true;
    switch (ops[i]) {
      case cache_op::get:
        if (hit) h.reads.push_back(versions_out[i]);
        else if (miss) ++h.saw_absent;
        else ok = false;
        break;
      case cache_op::contains:
        if (hit) ++h.saw_present;
        else if (miss) ++h.saw_absent;
        else ok = false;
        break;
      case cache_op::set:
        if (s == status::inserted) h.inserts.push_back(versions[i]);
        else if (s == status::assigned) h.assigns.push_back(versions[i]);
        else ok = false;
        break;
      case cache_op::add:
        if (s == status::inserted) h.inserts.push_back(versions[i]);
        else if (hit) ++h.saw_present;
        else ok = false;
        break;
      case cache_op::erase:
        if (s == status::erased) ++h.erases;
        else if (miss) ++h.saw_absent;
        else ok = false;
        break;
      case cache_op::get_or_set:
        if (hit) h.reads.push_back(versions_out[i]);
        else if (s == status::inserted && versions_out[i] == versions[i]) h.inserts.push_back(versions[i]);
        else ok = false;
        break;
    }
    if (!ok)
      return "op " + std::to_string(i) + " (" + std::to_string(static_cast<int>(ops[i])) + ") on key " +
             std::to_string(keys[i]) + ": status " + std::string(to_string(s)) + ", returned version " +
             std::to_string(versions_out[i]);
  }
  std::map<std::uint64_t, std::vector<std::uint64_t>> evictions;
  for (const auto& [k, v] : evicted) evictions[k].push_back(v);
  return check_histories(histories, before, after, [&](std::uint64_t k) {
    if (!reported) return forgetting<std::uint64_t>::any();
    const auto e = evictions.find(k);
    return forgetting<std::uint64_t>::reported(e == evictions.end() ? std::vector<std::uint64_t>{} : e->second);
  });
}

// The checker itself: hand-made histories it must accept (eviction explains a miss, an insert
// after a hit, a lost final value) and ones it must reject (a stale value, an assign or a hit
// with the key never present, a value evicted that was never current, counts that do not add up).
// Issue 22: every call that allocates leaves the cache exactly as it was when an allocation fails
// (injected at each allocation of a batch in turn: staging buffers, pooled counters and groups).
TEST(CacheBadInput, FailedAllocationLeavesTheCacheAsItWas) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 256;
  cfg.value_bytes = 16;
  kv_cache<std::uint64_t, 4, 4> c(cfg, ex);
  std::vector<std::uint64_t> keys(100);
  std::vector<std::uint64_t> ids(100);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 1000 + 7 * i, ids[i] = i + 1;
  std::vector<status> st(keys.size());
  c.set(keys, values_for(c, keys, ids), st);
  std::vector<std::byte> before(keys.size() * c.value_stride());
  std::vector<status> got(keys.size());
  c.get(keys, before, got);
  const std::size_t size_before = c.size();
  std::vector<std::uint64_t> fresh(3000);
  for (std::size_t i = 0; i < fresh.size(); ++i) fresh[i] = 900000 + i;  // a batch larger than any before
  std::vector<std::uint64_t> fresh_ids(fresh.size(), 9);
  const auto fresh_values = values_for(c, fresh, fresh_ids);
  std::vector<status> fresh_st(fresh.size());
  for (long long k = 0; k < 16; ++k) {
    warpkv::fault_injection::fail_allocation(k);
    bool threw = false;
    try {
      cache_evictions<std::uint64_t> ev;
      c.set(fresh, fresh_values, fresh_st, &ev);
    } catch (const error& e) {
      threw = true;
      EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
    }
    warpkv::fault_injection::disarm();
    if (!threw) break;  // every allocation of the batch succeeded: it ran
    ASSERT_EQ(c.size(), size_before) << "failure at allocation " << k;
    std::vector<std::byte> now(before.size());
    c.get(keys, now, got);
    for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(got[i], status::found) << "key " << i;
    ASSERT_EQ(now, before) << "failure at allocation " << k;
  }
}

TEST(CacheLinearizability, CheckerAcceptsEvictionAndRejectsStaleValues) {
  using G = cache_op;
  const status F = status::found, N = status::not_found, I = status::inserted, A = status::assigned,
               E = status::erased;
  struct batch {
    const char* what;
    std::vector<cache_op> ops;
    std::vector<status> st;
    std::vector<std::uint64_t> out;  // version a hit returned (0: none)
    std::unordered_map<std::uint64_t, std::uint64_t> before, after;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> evicted;  // (key 1, version)
    bool reported;
    bool valid;
  };
  // op i writes version 10 + i, all on key 1; the key held version 5 before when `before` says so
  const std::vector<batch> cases = {
      {"a miss of a present key, explained by an eviction", {G::get}, {N}, {0}, {{1, 5}}, {}, {}, false, true},
      {"the same eviction, reported", {G::get}, {N}, {0}, {{1, 5}}, {}, {{1, 5}}, true, true},
      {"a miss of a present key that nothing evicted", {G::get}, {N}, {0}, {{1, 5}}, {{1, 5}}, {}, false, false},
      {"hit, evicted, then a set inserts", {G::get, G::set}, {F, I}, {5, 0}, {{1, 5}}, {{1, 11}}, {}, false, true},
      {"the same with the eviction reported", {G::get, G::set}, {F, I}, {5, 0}, {{1, 5}}, {{1, 11}}, {{1, 5}}, true, true},
      {"set, get reads it, add re-inserts after an eviction",
       {G::set, G::get, G::add}, {I, F, I}, {0, 10, 0}, {}, {{1, 12}}, {}, false, true},
      {"get_or_set inserts after an eviction, another hits it",
       {G::get_or_set, G::get_or_set}, {I, F}, {10, 10}, {{1, 5}}, {{1, 10}}, {{1, 5}}, true, true},
      {"assign then erase then insert", {G::set, G::erase, G::set}, {A, E, I}, {0, 0, 0}, {{1, 5}}, {{1, 12}}, {}, true,
       true},
      {"assign, evicted, re-inserted by a set", {G::set, G::get, G::set}, {A, F, I}, {0, 10, 0}, {{1, 5}}, {{1, 12}}, {},
       false, true},
      {"a stale value: the hit returns version 5, overwritten by 6 before the batch", {G::get}, {F}, {5}, {{1, 6}},
       {{1, 6}}, {}, false, false},
      {"a hit returns a version nobody wrote", {G::get, G::set}, {F, A}, {7, 0}, {{1, 5}}, {{1, 11}}, {}, false, false},
      {"an insert into a present key that nothing evicted", {G::set}, {I}, {0}, {{1, 5}}, {{1, 10}}, {}, true, false},
      {"assigned on a key that was never present", {G::set}, {A}, {0}, {}, {{1, 10}}, {}, false, false},
      {"a hit on a key that was never present", {G::get}, {F}, {5}, {}, {}, {}, false, false},
      {"the final value is not the last write: an assign must follow the only insert",
       {G::set, G::set}, {I, A}, {0, 0}, {}, {{1, 10}}, {}, false, false},
      {"an eviction of a value that was never current", {G::set}, {A}, {0}, {{1, 5}}, {}, {{1, 9}}, true, false},
      {"one phase evicted twice", {G::get, G::set}, {F, I}, {5, 0}, {{1, 5}}, {}, {{1, 5}, {1, 5}}, true, false},
      {"a reported-only cache lost the key without an eviction", {G::get}, {F}, {5}, {{1, 5}}, {}, {}, true, false},
      {"absent afterwards although present, no eviction, and a miss", {G::get}, {N}, {0}, {{1, 5}}, {{1, 5}}, {}, true,
       false},
      {"a key appears with no write", {G::contains}, {N}, {0}, {}, {{1, 5}}, {}, false, false},
      {"two erases of one present phase", {G::erase, G::erase}, {E, E}, {0, 0}, {{1, 5}}, {}, {}, false, false},
      {"get_or_set inserted but returned another value", {G::get_or_set}, {I}, {5}, {}, {{1, 10}}, {}, false, false},
  };
  for (const batch& c : cases) {
    std::vector<std::uint64_t> keys(c.ops.size(), 1), versions(c.ops.size());
    for (std::size_t i = 0; i < versions.size(); ++i) versions[i] = 10 + i;
    std::vector<std::uint64_t> out = c.out;
    for (std::size_t i = 0; i < out.size(); ++i)
      if (c.ops[i] == G::get_or_set && c.st[i] == I && out[i] == 0) out[i] = versions[i];
    const auto verdict = check_cache_batch(c.ops, keys, versions, c.st, out, c.evicted, c.reported, c.before, c.after);
    EXPECT_EQ(verdict.has_value(), !c.valid) << c.what << (verdict ? ": " + *verdict : std::string());
  }
}

// Many tiles race on a few hot keys (most operations on 8 keys), in a cache too small for the
// key set, with erases that make room for cuckoo moves. Every value read, evicted or left in the
// cache must be a consistent value of its own key (checksum: a torn value fails), and each key's
// operations must be linearizable (check_cache_batch) from its state when the batch began
// (exported after the previous batch) to its state after it, with exactly the reported
// evictions as the cache's own forgetting: eviction may explain a miss, never a stale value.
// `cfg`: the configuration under test (its capacity is set here).
template <class Cache>
void race(const execution& ex, cache_config cfg) {
  SCOPED_TRACE(::testing::Message() << "bucket width " << Cache::bucket_width << ", value bytes " << cfg.value_bytes
                                    << ", max kicks " << cfg.max_kicks << ", sync " << static_cast<int>(cfg.sync)
                                    << ", eviction " << static_cast<int>(cfg.eviction) << ", layout "
                                    << static_cast<int>(cfg.layout) << ", absorb_sets " << cfg.absorb_sets
                                    << ", combine_get_or_set " << cfg.combine_get_or_set << ", key_digests "
                                    << cfg.key_digests);
  cfg.capacity = 64;
  Cache cache(cfg, ex);
  const std::size_t stride = cache.value_stride(), words = stride / 8;
  std::mt19937_64 rng(77);
  std::unordered_map<std::uint64_t, std::uint64_t> at_start;  // key -> version when the batch begins
  std::uint64_t version = 1;
  std::size_t evictions = 0, misses = 0;
  for (std::size_t b = 0; b < scaled(12, 2); ++b) {
    cache.set_global_epoch(b / 2);  // the epoch designs' entries span epochs (the others ignore it)
    const std::size_t n = scaled(2000, 600);
    std::vector<cache_op> ops(n);
    std::vector<std::uint64_t> keys(n), versions(n);
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned r = rng() % 100;
      ops[i] = r < 40 ? cache_op::get : r < 65 ? cache_op::set : r < 75 ? cache_op::get_or_set : r < 83 ? cache_op::erase
                                                                : r < 93 ? cache_op::add : cache_op::contains;
      keys[i] = key_of<std::uint64_t>(rng() % 4 != 0 ? rng() % 8 : 8 + rng() % 200);
      versions[i] = version++;
    }
    const auto in = values_for(cache, keys, versions);
    std::vector<std::byte> out(n * stride);
    std::vector<status> st(n);
    cache_evictions<std::uint64_t> ev;
    cache.execute(ops, keys, in, out, st, &ev);
    // every value returned must check out as a whole value of its own key: its version
    auto version_of = [&](std::uint64_t key, const std::vector<std::byte>& bytes, std::size_t i, const char* what) {
      const std::uint64_t v = check_value(key, words_at(bytes, i, stride), words);
      EXPECT_NE(v, ~0ull) << "torn or foreign " << what << " for key " << key;
      return v;
    };
    std::vector<std::uint64_t> returned(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const bool has_value = (ops[i] == cache_op::get && st[i] == status::found) ||
                             (ops[i] == cache_op::get_or_set && (st[i] == status::found || st[i] == status::inserted));
      if (has_value) returned[i] = version_of(keys[i], out, i, "hit");
      misses += ops[i] == cache_op::get && st[i] == status::not_found;
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> evicted;
    for (std::size_t e = 0; e < ev.keys.size(); ++e)
      evicted.emplace_back(ev.keys[e], version_of(ev.keys[e], ev.values, e, "evicted value"));
    evictions += evicted.size();
    const auto all = cache.export_entries();
    ASSERT_LE(all.keys.size(), cache.capacity());
    std::unordered_map<std::uint64_t, std::uint64_t> at_end;
    for (std::size_t i = 0; i < all.keys.size(); ++i)
      ASSERT_TRUE(at_end.emplace(all.keys[i], version_of(all.keys[i], all.values, i, "final value")).second)
          << "a key stored twice";
    ASSERT_FALSE(::testing::Test::HasFailure());
    const auto verdict = check_cache_batch(ops, keys, versions, st, returned, evicted, true, at_start, at_end);
    ASSERT_FALSE(verdict.has_value()) << "batch " << b << ": " << *verdict;
    at_start = std::move(at_end);
  }
  // the check must have had something to explain: evictions and misses in a cache this small
  EXPECT_GT(evictions, 0u);
  EXPECT_GT(misses, 0u);
}

TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValues) {
  WARPKV_TEST_EXECUTION(ex);
  race<config_cache<std::uint64_t, 4, 4>>(ex, {.value_bytes = 100, .max_kicks = 5000});
  race<config_cache<std::uint64_t, 8, 2>>(ex, {.value_bytes = 32, .max_kicks = 5000});
  race<config_cache<std::uint64_t, 4, 1>>(ex, {.value_bytes = 24, .max_kicks = 0});
}

// The same race under the score policies (HierarchicalKV's): lfu and epoch_lfu hits CAS their
// counts, epoch_lru hits store, custom's take the stamps of the span API's writes; one lfu design
// under the seed's slot locks and inline values.
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesUnderScorePolicies) {
  WARPKV_TEST_EXECUTION(ex);
  using namespace detail;
  race<kv_cache<std::uint64_t, 4, 4, cache_designs::optimistic_lfu>>(ex, {.value_bytes = 100, .max_kicks = 5000});
  race<kv_cache<std::uint64_t, 8, 2, cache_designs::optimistic_epoch_lru>>(ex, {.value_bytes = 32, .max_kicks = 5000});
  race<kv_cache<std::uint64_t, 4, 1, cache_designs::optimistic_epoch_lfu>>(ex, {.value_bytes = 24, .max_kicks = 0});
  race<kv_cache<std::uint64_t, 8, 2, cache_designs::optimistic_custom>>(ex, {.value_bytes = 32, .max_kicks = 0});
  race<kv_cache<std::uint64_t, 4, 4, cache_design<rw_lock_slots, lfu_eviction, inline_values, plain_keys>>>(
      ex, {.value_bytes = 100, .max_kicks = 5000});
}

// The same race with one bucket per key (HierarchicalKV's placement): writes lock one bucket;
// with digests and 8 slots a lane (W 16 T 2) the locked scan reads a digest word per lane and a
// key's words only where its digest matches.
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesInOneBucket) {
  WARPKV_TEST_EXECUTION(ex);
  using namespace detail;
  race<kv_cache<std::uint64_t, 32, 4, cache_designs::one_bucket_lru>>(ex, {.value_bytes = 100});
  race<kv_cache<std::uint64_t, 16, 2, cache_design<optimistic_slots, clock_eviction, value_slab, digest_keys, one_bucket>>>(
      ex, {.value_bytes = 32});
}

// The same race with the seed's per-slot reader/writer locks (and clock eviction).
// The seed's design as its own instantiation (ccht_cache: rw_lock slots, lru, inline values):
// the same race, its kernels compiled for that design alone.
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesInTheSeedsDesign) {
  WARPKV_TEST_EXECUTION(ex);
  race<ccht_cache<std::uint64_t>>(ex, {.value_bytes = 100, .max_kicks = 5000});
  race<ccht_cache<std::uint64_t>>(ex, {.value_bytes = 24, .max_kicks = 0});
}

// A cache type of a fixed design takes cache_config's design fields only at their defaults or
// equal to its design's, reports its design's, and by_config follows the config.
TEST(CacheDesign, FixedDesignsTakeTheirOwnFields) {
  WARPKV_TEST_EXECUTION(ex);
  expect_error([&] { kv_cache<std::uint64_t> c({.capacity = 64, .sync = cache_slot_sync::rw_lock}, ex); },
               errc::invalid_argument);
  expect_error([&] { ccht_cache<std::uint64_t> c({.capacity = 64, .eviction = cache_eviction_policy::clock}, ex); },
               errc::invalid_argument);
  ccht_cache<std::uint64_t> seed({.capacity = 64, .sync = cache_slot_sync::rw_lock}, ex);
  EXPECT_EQ(seed.config().sync, cache_slot_sync::rw_lock);
  EXPECT_EQ(seed.config().layout, cache_layout::inline_values);
  EXPECT_EQ(seed.config().eviction, cache_eviction_policy::lru);
  static_assert(ccht_cache<std::uint64_t>::ref_type::slot_sync() == cache_slot_sync::rw_lock);
  static_assert(kv_cache<std::uint64_t>::ref_type::slot_sync() == cache_slot_sync::optimistic);
  static_assert(kv_cache<std::uint64_t>::ref_type::eviction() == cache_eviction_policy::lru);
  kv_cache<std::uint64_t> fast({.capacity = 64, .eviction = cache_eviction_policy::lru}, ex);
  EXPECT_EQ(fast.config().sync, cache_slot_sync::optimistic);
  config_cache<std::uint64_t, 4, 4> any({.capacity = 64, .eviction = cache_eviction_policy::clock, .key_digests = true}, ex);
  EXPECT_EQ(any.config().eviction, cache_eviction_policy::clock);
  EXPECT_TRUE(any.with_ref([](const auto& r) { return r.eviction() == cache_eviction_policy::clock; }));
  // each serves the same operations
  const std::vector<std::uint64_t> keys{1, 2, 3};
  std::vector<std::uint64_t> vals{10, 20, 30};
  std::vector<std::byte> in(keys.size() * 8), out(keys.size() * 8);
  std::memcpy(in.data(), vals.data(), in.size());
  std::vector<status> st(keys.size());
  auto round_trip = [&](auto& cache) {
    cache.set(keys, in, st);
    EXPECT_EQ(st, std::vector<status>(3, status::inserted));
    cache.get(keys, out, st);
    EXPECT_EQ(st, std::vector<status>(3, status::found));
    EXPECT_EQ(std::memcmp(out.data(), in.data(), in.size()), 0);
  };
  round_trip(seed);
  round_trip(fast);
  round_trip(any);
}

TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesUnderSlotLocks) {
  WARPKV_TEST_EXECUTION(ex);
  race<config_cache<std::uint64_t, 4, 4>>(ex, {.value_bytes = 100, .max_kicks = 5000, .sync = cache_slot_sync::rw_lock});
  race<config_cache<std::uint64_t, 8, 2>>(
      ex, {.value_bytes = 32, .max_kicks = 5000, .eviction = cache_eviction_policy::clock, .sync = cache_slot_sync::rw_lock});
  race<config_cache<std::uint64_t, 4, 1>>(
      ex, {.value_bytes = 24, .max_kicks = 0, .eviction = cache_eviction_policy::random, .sync = cache_slot_sync::rw_lock});
}

// The same race with set absorption: of each key's sets in a batch only the last writes, the
// others are linearized just before it (statuses from the fix-up pass).
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesWithSetAbsorption) {
  WARPKV_TEST_EXECUTION(ex);
  race<config_cache<std::uint64_t, 4, 4>>(ex, {.value_bytes = 100, .max_kicks = 5000, .absorb_sets = true});
  race<config_cache<std::uint64_t, 8, 2>>(ex, {.value_bytes = 32, .max_kicks = 0, .absorb_sets = true});
}

// The same race with get_or_set combining (alone, and with set absorption): of each key's
// get_or_sets in a batch only the last runs, the others find its value (copied by the fix-up).
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesWithCombinedGetOrSet) {
  WARPKV_TEST_EXECUTION(ex);
  race<config_cache<std::uint64_t, 4, 4>>(ex, {.value_bytes = 100, .max_kicks = 5000, .combine_get_or_set = true});
  race<config_cache<std::uint64_t, 8, 2>>(ex, {.value_bytes = 32, .max_kicks = 0, .absorb_sets = true, .combine_get_or_set = true});
  race<config_cache<std::uint64_t, 4, 1>>(ex, {.value_bytes = 24,
                                           .max_kicks = 5000,
                                           .eviction = cache_eviction_policy::clock,
                                           .sync = cache_slot_sync::rw_lock,
                                           .absorb_sets = true,
                                           .combine_get_or_set = true});
}

// get_or_set combining, exactly: in a batch of get_or_sets on a few keys, a key present before
// the batch is found by every one of its operations with its old value; an absent key is
// inserted by exactly one operation and every other one finds that operation's value, which the
// cache then holds; execute_resident's counts agree (with and without an output buffer).
TEST(CacheAbsorb, CombinedGetOrSetOfAKeyRunsOnce) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 8> cache({.capacity = 4096, .value_bytes = 40, .combine_get_or_set = true}, ex);
  const std::size_t stride = cache.value_stride(), words = stride / 8;
  std::mt19937_64 rng(11);
  std::uint64_t version = 1, next_key = 1;
  for (int round = 0; round < 4; ++round) {
    // 8 keys present (version 0) and 8 absent
    std::vector<std::uint64_t> present, absent;
    for (int j = 0; j < 8; ++j) present.push_back(key_of<std::uint64_t>(next_key++));
    for (int j = 0; j < 8; ++j) absent.push_back(key_of<std::uint64_t>(next_key++));
    std::vector<status> st0(present.size());
    cache.set(present, values_for(cache, present, std::vector<std::uint64_t>(present.size(), 0)), st0);
    const std::size_t n = scaled(3000, 500);
    std::vector<std::uint64_t> keys(n), versions(n);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = rng() % 2 ? present[rng() % 8] : absent[rng() % 8];
      versions[i] = version++;
    }
    const auto in = values_for(cache, keys, versions);
    std::vector<status> st(n);
    std::vector<std::byte> out(n * stride);
    const int mode = round % 2;  // 0: the host-span batch; 1: execute_resident
    if (mode == 0) {
      cache.execute(std::vector<cache_op>(n, cache_op::get_or_set), keys, in, out, st);
    } else {
      buffer<std::uint64_t> d_keys = buffer<std::uint64_t>::from_host(keys, ex);
      std::vector<std::uint64_t> w(n * words);
      std::memcpy(w.data(), in.data(), in.size());
      buffer<std::uint64_t> d_in = buffer<std::uint64_t>::from_host(w, ex);
      buffer<std::uint64_t> d_out(n * words, ex);
      buffer<status> d_st(n, ex);
      const bool with_out = round == 1;
      const batch_summary sum = cache.execute_resident(n, nullptr, cache_op::get_or_set, d_keys.data(), d_in.data(),
                                                       with_out ? d_out.data() : nullptr, d_st.data());
      d_st.copy_to_host(st.data(), n);
      std::size_t used_absent = 0;
      for (const std::uint64_t k : absent) used_absent += std::count(keys.begin(), keys.end(), k) > 0;
      EXPECT_EQ(sum[status::inserted], used_absent);
      EXPECT_EQ(sum[status::found], n - used_absent);
      if (!with_out) continue;
      std::vector<std::uint64_t> ow(n * words);
      d_out.copy_to_host(ow.data(), ow.size());
      std::memcpy(out.data(), ow.data(), out.size());
    }
    std::map<std::uint64_t, std::size_t> inserts;
    std::map<std::uint64_t, std::uint64_t> inserted_version;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(st[i] == status::found || st[i] == status::inserted) << i;
      const std::uint64_t v = check_value(keys[i], words_at(out, i, stride), words);
      ASSERT_NE(v, ~0ull) << "torn or foreign value, op " << i;
      if (st[i] == status::inserted) {
        ++inserts[keys[i]];
        EXPECT_EQ(v, versions[i]) << "an insert returns its own value";
        inserted_version[keys[i]] = v;
      }
    }
    for (const std::uint64_t k : present) EXPECT_EQ(inserts[k], 0u) << "present key " << k << " inserted";
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t v = check_value(keys[i], words_at(out, i, stride), words);
      const bool was_present = std::find(present.begin(), present.end(), keys[i]) != present.end();
      if (was_present) EXPECT_EQ(v, 0u) << "op " << i << " did not find the old value";
      else EXPECT_EQ(v, inserted_version[keys[i]]) << "op " << i << " did not find the inserted value";
    }
    for (const std::uint64_t k : absent) {
      if (std::count(keys.begin(), keys.end(), k) == 0) continue;
      EXPECT_EQ(inserts[k], 1u) << "absent key " << k;
      std::vector<std::uint64_t> one{k};
      std::vector<std::byte> o1(stride);
      std::vector<status> s1(1);
      cache.get(one, o1, s1);
      ASSERT_EQ(s1[0], status::found);
      EXPECT_EQ(check_value(k, words_at(o1, 0, stride), words), inserted_version[k]);
    }
  }
}

// The group scratch is pooled: a batch's operations that belong to no group must not see the
// previous batch's groups. Batch 1 groups every operation (sets of one key); batch 2 reuses the
// scratch with get_or_sets (not grouped: combining off) of new keys at the same indexes, each of
// which must insert its own key.
TEST(CacheAbsorb, OperationsOutsideGroupsIgnoreTheLastBatchsGroups) {
  WARPKV_TEST_EXECUTION(ex);
  kv_cache<std::uint64_t, 8> cache({.capacity = 4096, .value_bytes = 16, .absorb_sets = true}, ex);
  const std::size_t stride = cache.value_stride(), words = stride / 8;
  const std::size_t n = 256;
  std::uint64_t version = 1;
  for (int round = 0; round < 2; ++round) {
    const std::vector<std::uint64_t> same(n, key_of<std::uint64_t>(1000 + static_cast<std::uint64_t>(round)));
    std::vector<std::uint64_t> versions(n);
    for (auto& v : versions) v = version++;
    std::vector<status> st(n);
    std::vector<std::byte> out(n * stride);
    cache.execute(std::vector<cache_op>(n, cache_op::set), same, values_for(cache, same, versions), out, st);
    EXPECT_EQ(std::count(st.begin(), st.end(), status::inserted), 1) << "round " << round;
    EXPECT_EQ(std::count(st.begin(), st.end(), status::assigned), static_cast<std::ptrdiff_t>(n - 1));
    std::vector<std::uint64_t> fresh(n);
    for (std::size_t i = 0; i < n; ++i) fresh[i] = key_of<std::uint64_t>(1 + i + n * static_cast<std::uint64_t>(round));
    for (auto& v : versions) v = version++;
    cache.execute(std::vector<cache_op>(n, cache_op::get_or_set), fresh, values_for(cache, fresh, versions), out, st);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(st[i], status::inserted) << "round " << round << ", op " << i;
      EXPECT_EQ(check_value(fresh[i], words_at(out, i, stride), words), versions[i]) << "op " << i;
    }
    std::vector<status> found(n);
    cache.contains(fresh, found);
    EXPECT_EQ(std::count(found.begin(), found.end(), status::found), static_cast<std::ptrdiff_t>(n));
  }
}

// A mixed batch's status counts (execute_resident with an operation array, as YCSB runs it) are
// the histogram of its statuses while the operations of groups settle lane by lane beside the
// tiles' other operations: a hot head of keys under sets, adds, get_or_sets, gets, contains and
// erases, with invalid keys among them; every status is one its operation may return and every
// value returned is a whole value of its key.
template <class Key>
void mixed_batch_counts_are_its_statuses(const execution& ex) {
  kv_cache<Key, 8> cache({.capacity = 4096, .value_bytes = 24, .absorb_sets = true, .combine_get_or_set = true}, ex);
  const std::size_t stride = cache.value_stride(), words = stride / 8;
  std::mt19937_64 rng(17);
  std::uint64_t version = 1;
  const cache_op kinds[] = {cache_op::get,      cache_op::set,   cache_op::get_or_set, cache_op::contains,
                            cache_op::erase,    cache_op::add,   cache_op::get_or_set, cache_op::set};
  for (int round = 0; round < 4; ++round) {
    const std::size_t n = scaled(4000, 600);
    std::vector<Key> keys(n);
    std::vector<cache_op> ops(n);
    std::vector<std::uint64_t> versions(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t id = rng() % 4 == 0 ? 1 + rng() % 500 : 1 + rng() % 6;  // six hot keys
      // one in 64 an invalid key: u64's empty-key sentinel, or a byte key of length 0
      if constexpr (std::is_same_v<Key, std::uint64_t>) keys[i] = rng() % 64 == 0 ? ~0ull : key_of<Key>(id);
      else keys[i] = rng() % 64 == 0 ? Key{} : key_of<Key>(id);
      ops[i] = kinds[rng() % 8];
      versions[i] = version++;
    }
    const auto in = values_for(cache, keys, versions);
    std::vector<std::uint64_t> in_words(n * words);
    std::memcpy(in_words.data(), in.data(), in.size());
    buffer<Key> d_keys = buffer<Key>::from_host(keys, ex);
    buffer<cache_op> d_ops = buffer<cache_op>::from_host(ops, ex);
    buffer<std::uint64_t> d_in = buffer<std::uint64_t>::from_host(in_words, ex);
    buffer<std::uint64_t> d_out(n * words, ex);
    buffer<status> d_st(n, ex);
    const batch_summary sum =
        cache.execute_resident(n, d_ops.data(), cache_op::get, d_keys.data(), d_in.data(), d_out.data(), d_st.data());
    std::vector<status> st(n);
    d_st.copy_to_host(st.data(), n);
    std::vector<std::uint64_t> out(n * words);
    d_out.copy_to_host(out.data(), out.size());
    std::array<std::uint64_t, num_status_kinds> seen{};
    for (std::size_t i = 0; i < n; ++i) {
      ++seen[static_cast<int>(st[i])];
      const bool valid = cache_key_layout<Key>::valid(keys[i]);
      if (!valid) {
        EXPECT_EQ(st[i], status::invalid_key) << "op " << i;
        continue;
      }
      const status s = st[i];
      switch (ops[i]) {
        case cache_op::get:
        case cache_op::contains: EXPECT_TRUE(s == status::found || s == status::not_found) << "op " << i; break;
        case cache_op::set: EXPECT_TRUE(s == status::inserted || s == status::assigned) << "op " << i; break;
        case cache_op::add:
        case cache_op::get_or_set: EXPECT_TRUE(s == status::inserted || s == status::found) << "op " << i; break;
        case cache_op::erase: EXPECT_TRUE(s == status::erased || s == status::not_found) << "op " << i; break;
      }
      const bool has_value = (ops[i] == cache_op::get && s == status::found) || ops[i] == cache_op::get_or_set;
      if (has_value) {
        EXPECT_NE(check_value(key_id_bits(keys[i]), &out[i * words], words), ~0ull) << "torn or foreign value, op " << i;
      }
    }
    for (int k = 0; k < num_status_kinds; ++k)
      EXPECT_EQ(sum.count[static_cast<std::size_t>(k)], seen[static_cast<std::size_t>(k)])
          << "round " << round << ", status " << to_string(static_cast<status>(k));
  }
}
TEST(CacheAbsorb, MixedBatchCountsAreItsStatusesWhileGroupsSettleLaneByLane) {
  WARPKV_TEST_EXECUTION(ex);
  mixed_batch_counts_are_its_statuses<std::uint64_t>(ex);
  mixed_batch_counts_are_its_statuses<byte_key<32>>(ex);
}

// Set absorption, exactly: after a batch of sets on a few keys, each key holds its last set's
// value; a key present before the batch reports only `assigned`, an absent one exactly one
// `inserted`; execute_resident's counts agree.
TEST(CacheAbsorb, LastSetOfAKeyInABatchWins) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 4096;
  cfg.value_bytes = 16;
  cfg.absorb_sets = true;
  kv_cache<std::uint64_t, 8> cache(cfg, ex);
  const std::size_t stride = cache.value_stride(), words = stride / 8;
  std::vector<std::uint64_t> present;
  for (std::uint64_t k = 0; k < 10; ++k) present.push_back(key_of<std::uint64_t>(k + 1));
  std::vector<status> st0(present.size());
  cache.set(present, values_for(cache, present, std::vector<std::uint64_t>(present.size(), 0)), st0);
  std::mt19937_64 rng(3);
  std::uint64_t version = 1;
  for (int round = 0; round < 3; ++round) {
    const bool resident = round == 2;
    const std::size_t n = scaled(3000, 500);
    std::vector<std::uint64_t> keys(n), versions(n);
    std::map<std::uint64_t, std::size_t> last;  // key -> index of its last set
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = key_of<std::uint64_t>(1 + rng() % 20 + static_cast<std::uint64_t>(round) * 100 * (rng() % 2));
      versions[i] = version++;
      last[keys[i]] = i;
    }
    std::set<std::uint64_t> was_present;
    for (const auto& [k, i] : last) {
      std::vector<std::uint64_t> one{k};
      std::vector<status> s1(1);
      cache.contains(one, s1);
      if (s1[0] == status::found) was_present.insert(k);
    }
    const auto in = values_for(cache, keys, versions);
    std::vector<status> st(n);
    if (!resident) {
      cache.set(keys, in, st);
    } else {
      buffer<std::uint64_t> d_keys = buffer<std::uint64_t>::from_host(keys, ex);
      std::vector<std::uint64_t> w(n * words);
      std::memcpy(w.data(), in.data(), in.size());
      buffer<std::uint64_t> d_in = buffer<std::uint64_t>::from_host(w, ex);
      buffer<status> d_st(n, ex);
      const batch_summary sum = cache.execute_resident(n, nullptr, cache_op::set, d_keys.data(), d_in.data(), nullptr, d_st.data());
      d_st.copy_to_host(st.data(), n);
      EXPECT_EQ(sum[status::inserted], last.size() - was_present.size());
      EXPECT_EQ(sum[status::assigned], n - (last.size() - was_present.size()));
    }
    std::map<std::uint64_t, std::size_t> inserts;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(st[i] == status::inserted || st[i] == status::assigned) << i;
      if (st[i] == status::inserted) ++inserts[keys[i]];
    }
    for (const auto& [k, i] : last) {
      EXPECT_EQ(inserts[k], was_present.count(k) ? 0u : 1u) << "round " << round << ", key " << k;
      std::vector<std::uint64_t> one{k};
      std::vector<std::byte> out(stride);
      std::vector<status> s1(1);
      cache.get(one, out, s1);
      ASSERT_EQ(s1[0], status::found);
      EXPECT_EQ(check_value(k, words_at(out, 0, stride), words), versions[i]) << "not the last set, round " << round;
    }
  }
}

// Values inline after their keys (the layout trial's other side), both sync modes.
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesInlineLayout) {
  WARPKV_TEST_EXECUTION(ex);
  race<config_cache<std::uint64_t, 4, 4>>(ex, {.value_bytes = 100, .max_kicks = 5000, .layout = cache_layout::inline_values});
  race<config_cache<std::uint64_t, 8, 2>>(ex, {.value_bytes = 32,
                                           .max_kicks = 5000,
                                           .eviction = cache_eviction_policy::clock,
                                           .sync = cache_slot_sync::rw_lock,
                                           .layout = cache_layout::inline_values});
}

// Key digests (readers compare key words only where a slot's digest byte matches): bucket
// widths below and above the 8 digests of a word (W = 4: two buckets' writers share a word),
// both sync modes, cuckoo moves on and off.
TEST(CacheConcurrency, RacingTilesNeverReadTornOrForeignValuesWithKeyDigests) {
  WARPKV_TEST_EXECUTION(ex);
  race<config_cache<std::uint64_t, 4, 4>>(ex, {.value_bytes = 100, .max_kicks = 5000, .key_digests = true});
  race<config_cache<std::uint64_t, 8, 2>>(ex, {.value_bytes = 32, .max_kicks = 0, .sync = cache_slot_sync::rw_lock, .key_digests = true});
  race<config_cache<std::uint64_t, 16, 4>>(ex, {.value_bytes = 24,
                                            .max_kicks = 5000,
                                            .layout = cache_layout::inline_values,
                                            .combine_get_or_set = true,
                                            .key_digests = true});
}

// Resident keys are never erased; churn keys are set and erased around them at ~75% load, so
// inserts into full buckets run cuckoo moves that carry resident keys between their buckets.
// A get of a resident key may miss only when that key was evicted (reported) in the same batch:
// an entry in transit is never missed, in either synchronization mode.
void moves_never_hide_entries(const execution& ex, cache_slot_sync sync, bool key_digests = false) {
  SCOPED_TRACE(::testing::Message() << "sync " << static_cast<int>(sync) << ", key_digests " << key_digests);
  using Cache = config_cache<std::uint64_t, 4, 1>;
  cache_config cfg;
  cfg.capacity = 64;
  cfg.value_bytes = 16;
  cfg.sync = sync;
  cfg.key_digests = key_digests;  // a move carries the digest to the entry's new slot
  Cache cache(cfg, ex);
  const std::size_t stride = cache.value_stride(), words = stride / 8;
  std::vector<std::uint64_t> resident(48), churn(64);
  for (std::size_t i = 0; i < resident.size(); ++i) resident[i] = key_of<std::uint64_t>(i + 1);
  for (std::size_t i = 0; i < churn.size(); ++i) churn[i] = key_of<std::uint64_t>(1000 + i);
  std::vector<status> st(resident.size());
  cache.set(resident, values_for(cache, resident, std::vector<std::uint64_t>(resident.size(), 0)), st);
  // where each resident key sits (host memory only): a key found in another slot later has moved
  auto slots_now = [&] {
    std::map<std::uint64_t, std::size_t> at;
    if (ex.where != backend::host) return at;
    cache.with_ref([&](const auto& r) {
      for (std::size_t s = 0; s < cache.capacity(); ++s)
        if (!r.slot_empty(s)) at[r.slot_key(s)] = s;
    });
    return at;
  };
  auto before = slots_now();
  std::size_t moved = 0, misses = 0;
  std::mt19937_64 rng(31);
  for (std::size_t b = 0; b < scaled(200, 30); ++b) {
    const std::size_t n = scaled(4000, 1000);
    std::vector<cache_op> ops(n);
    std::vector<std::uint64_t> keys(n), versions(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      // erases 7x as often as sets: about 8 churn keys live, a set nearly always inserts at ~85% load
      const unsigned r = rng() % 16;
      ops[i] = r < 8 ? cache_op::get : r == 8 ? cache_op::set : cache_op::erase;
      keys[i] = r < 8 ? resident[rng() % resident.size()] : churn[rng() % churn.size()];
    }
    std::vector<std::byte> out(n * stride);
    std::vector<status> bst(n);
    cache_evictions<std::uint64_t> ev;
    cache.execute(ops, keys, values_for(cache, keys, versions), out, bst, &ev);
    const std::set<std::uint64_t> evicted(ev.keys.begin(), ev.keys.end());
    for (std::size_t i = 0; i < n; ++i) {
      if (ops[i] != cache_op::get) continue;
      if (bst[i] == status::found) {
        ASSERT_EQ(check_value(keys[i], words_at(out, i, stride), words), 0u) << "torn or foreign value";
      } else {
        ASSERT_EQ(bst[i], status::not_found);
        ASSERT_TRUE(evicted.count(keys[i])) << "resident key " << keys[i] << " missed without being evicted, batch " << b;
        ++misses;
      }
    }
    // put back what was evicted (putting back may evict other resident keys), then count
    // resident keys that moved
    std::vector<std::uint64_t> back;
    for (const std::uint64_t k : resident)
      if (evicted.count(k)) back.push_back(k);
    while (!back.empty()) {
      std::vector<status> bs(back.size());
      cache_evictions<std::uint64_t> bev;
      cache.set(back, values_for(cache, back, std::vector<std::uint64_t>(back.size(), 0)), bs, &bev);
      back.clear();
      for (const std::uint64_t k : bev.keys)
        if (std::find(resident.begin(), resident.end(), k) != resident.end()) back.push_back(k);
    }
    const auto after = slots_now();
    for (const std::uint64_t k : resident)
      if (!evicted.count(k) && before.count(k) && after.count(k) && before.at(k) != after.at(k)) ++moved;
    before = after;
  }
  if (ex.where == backend::host) {
    EXPECT_GT(moved, 0u) << "no cuckoo move carried a resident key: the test tested nothing";
  }
  ::testing::Test::RecordProperty("resident_moves", static_cast<int>(moved));
  ::testing::Test::RecordProperty("resident_misses_by_eviction", static_cast<int>(misses));
}

TEST(CacheConcurrency, EntriesInTransitAreNeverMissed) {
  WARPKV_TEST_EXECUTION(ex);
  moves_never_hide_entries(ex, cache_slot_sync::optimistic);
  moves_never_hide_entries(ex, cache_slot_sync::rw_lock);
  moves_never_hide_entries(ex, cache_slot_sync::optimistic, true);
  moves_never_hide_entries(ex, cache_slot_sync::rw_lock, true);
}

// The final state of racing batches on distinct keys is exact: each key's last write wins.
TEST(CacheConcurrency, SeveralHostThreadsOnOneCache) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 4096;
  cfg.value_bytes = 32;
  kv_cache<std::uint64_t, 4, 4> cache(cfg, ex);
  const int threads = 3;
  const std::size_t per = scaled(600, 100);
  std::vector<std::thread> pool;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<std::uint64_t> keys(per), versions(per, static_cast<std::uint64_t>(t));
      for (std::size_t i = 0; i < per; ++i) keys[i] = key_of<std::uint64_t>(t * 100000 + i + 1);
      std::vector<status> st(per);
      cache.set(keys, values_for(cache, keys, versions), st);
      std::vector<std::byte> out(per * 32);
      cache.get(keys, out, st);
      for (std::size_t i = 0; i < per; ++i)
        if (st[i] != status::found || check_value(keys[i], words_at(out, i, 32), 4) != static_cast<std::uint64_t>(t))
          ++failures;
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(cache.size(), threads * per);
}

// ---- the device path's bookkeeping (issue 11) ----------------------------------------------
// execute_resident takes its status counters from a pool kept by the cache: batches from several
// host threads at once must each count their own operations (a shared set would mix them).
TEST(CacheResident, ConcurrentBatchesCountTheirOwnStatuses) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 8192;
  cfg.value_bytes = 8;
  kv_cache<std::uint64_t, 8> cache(cfg, ex);
  const int threads = 3;
  const std::size_t per = scaled(400, 64) / 2 * 2;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        // `per` new keys of this thread and round, then gets of half of them and half absent
        std::vector<std::uint64_t> keys(per), probe(per);
        for (std::size_t i = 0; i < per; ++i) {
          keys[i] = key_of<std::uint64_t>(1 + (static_cast<std::uint64_t>(t) * 16 + round) * 100000 + i);
          probe[i] = i % 2 == 0 ? keys[i] : key_of<std::uint64_t>(900000000 + t * 100000 + round * 10000 + i);
        }
        std::vector<std::uint64_t> vals(per, 7);
        buffer<std::uint64_t> d_keys = buffer<std::uint64_t>::from_host(keys, ex);
        buffer<std::uint64_t> d_probe = buffer<std::uint64_t>::from_host(probe, ex);
        buffer<std::uint64_t> d_vals = buffer<std::uint64_t>::from_host(vals, ex), d_out(per, ex);
        buffer<status> d_st(per, ex);
        const batch_summary set =
            cache.execute_resident(per, nullptr, cache_op::set, d_keys.data(), d_vals.data(), nullptr, d_st.data());
        const batch_summary get =
            cache.execute_resident(per, nullptr, cache_op::get, d_probe.data(), nullptr, d_out.data(), d_st.data());
        const batch_summary has =
            cache.execute_resident(per, nullptr, cache_op::contains, d_probe.data(), nullptr, nullptr, d_st.data());
        if (set[status::inserted] != per || set[status::assigned] != 0) ++failures;
        if (get[status::found] != per / 2 || get[status::not_found] != per / 2) ++failures;
        if (has[status::found] != per / 2 || has[status::not_found] != per / 2) ++failures;
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// Inserts take a free slot of the key's first bucket before one of its second, so reads find
// most entries by the first bucket alone (the read path probes it first). Reads the table's
// slots directly: host backend only.
// ---- the device ref in a user kernel ----------------------------------------------------------
// A user kernel in which every lane owns one get_or_set (the cache-aside pattern of a kernel that
// computes values on a miss): the tile serves its lanes' operations in turn through ref()
// (warpkv::serve_each), with stamps reserved from the cache so they order with its batches.
template <class Ref>
struct get_or_set_one_per_lane {
  Ref ref;
  const std::uint64_t* keys;
  const std::uint64_t* values;  ///< value_words per operation
  std::uint64_t* out;           ///< value_words per operation
  status* statuses;
  std::size_t n;
  std::uint64_t stamp_base;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    const std::size_t i = tile_index * Tile::size() + t.thread_rank();
    const std::uint64_t mine = i < n ? keys[i] : 0;
    const std::uint32_t w = ref.value_words();
    serve_each(t, i < n, [&](unsigned owner) {
      const std::size_t j = tile_index * Tile::size() + owner;
      const std::uint64_t k = t.shfl(mine, owner);
      const status st = ref.get_or_set(t, k, values + j * w, out + j * w, 0, cache_clock{stamp_base + j, 0});
      if (t.thread_rank() == owner) statuses[i] = st;
    });
  }
};

TEST(CacheRef, UserKernelGetOrSetOnePerLane) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 1u << 13;
  cfg.value_bytes = 16;
  using cache_t = kv_cache<std::uint64_t, 8, 4>;
  cache_t cache(cfg, ex);
  // Every key twice, with different values (copy 0: {key, 1}, copy 1: {key, 2}); the copies land
  // in different lanes, tiles or both. One inserts its value, the other must find exactly it.
  const std::size_t keys_n = scaled(3000, 400);
  std::vector<std::uint64_t> keys, values;
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t i = 0; i < keys_n; ++i) {
      const std::uint64_t k = key_of<std::uint64_t>(c == 0 ? i + 1 : keys_n - i);
      keys.push_back(k);
      values.insert(values.end(), {k, c + 1});
    }
  auto k = buffer<std::uint64_t>::from_host(keys, ex);
  auto v = buffer<std::uint64_t>::from_host(values, ex);
  buffer<std::uint64_t> out(values.size(), ex);
  buffer<status> st(keys.size(), ex);
  const std::uint64_t stamps = cache.reserve_stamps(keys.size());
  launch<cache_t::tile_size>(ex, (keys.size() + cache_t::tile_size - 1) / cache_t::tile_size,
                             simple_body<get_or_set_one_per_lane<cache_t::ref_type>>{
                                 {cache.ref(), k.data(), v.data(), out.data(), st.data(), keys.size(), stamps}});
  const auto statuses = st.to_vector();
  const auto got = out.to_vector();
  std::map<std::uint64_t, std::uint64_t> winner;  // key -> the copy whose value was inserted
  for (std::size_t i = 0; i < keys_n; ++i) {
    const std::size_t a = i, b = 2 * keys_n - 1 - i;  // the two copies of one key
    ASSERT_EQ(keys[a], keys[b]);
    ASSERT_TRUE((statuses[a] == status::inserted && statuses[b] == status::found) ||
                (statuses[a] == status::found && statuses[b] == status::inserted))
        << "key " << keys[a] << ": " << static_cast<int>(statuses[a]) << ", " << static_cast<int>(statuses[b]);
    const std::size_t won = statuses[a] == status::inserted ? a : b;
    winner[keys[a]] = values[won * 2 + 1];
    for (const std::size_t j : {a, b}) {  // both report the inserted value
      ASSERT_EQ(got[j * 2], keys[a]) << "operation " << j;
      ASSERT_EQ(got[j * 2 + 1], values[won * 2 + 1]) << "operation " << j;
    }
  }
  // The host API sees what the kernel inserted.
  std::vector<std::uint64_t> unique(keys.begin(), keys.begin() + keys_n);
  std::vector<std::byte> bytes(keys_n * cache.value_stride());
  std::vector<status> found(keys_n);
  cache.get(unique, bytes, found);
  for (std::size_t i = 0; i < keys_n; ++i) {
    ASSERT_EQ(found[i], status::found) << i;
    std::uint64_t w[2];
    std::memcpy(w, bytes.data() + i * cache.value_stride(), 16);
    EXPECT_EQ(w[0], unique[i]);
    EXPECT_EQ(w[1], winner[unique[i]]);
  }
  EXPECT_EQ(cache.size(), keys_n);
}

TEST(CachePlacement, EntriesFillTheirFirstBucketFirst) {
  WARPKV_TEST_EXECUTION(ex0);
  if (ex0.where != backend::host) GTEST_SKIP() << "reads the table from the host";
  execution ex = ex0;
  ex.host_tiles = 1;
  cache_config cfg;
  cfg.capacity = 256;
  cfg.value_bytes = 8;
  cfg.max_kicks = 0;  // no cuckoo moves: an entry stays where its insert put it
  kv_cache<std::uint64_t, 8, 4> cache(cfg, ex);
  const auto ref = cache.ref();
  std::size_t in_first = 0, first_had_room = 0;
  const std::size_t n = scaled(230, 120);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = key_of<std::uint64_t>(i + 1);
    const auto p = ref.buckets_of(k);
    const bool room = bucket_has_room(ref, p.first);
    std::vector<std::uint64_t> keys{k}, val{i};
    std::vector<std::byte> bytes(8);
    std::memcpy(bytes.data(), val.data(), 8);
    std::vector<status> st(1);
    cache.set(keys, bytes, st);
    ASSERT_EQ(st[0], status::inserted);
    const bool first = bucket_holds(ref, p.first, k);
    ASSERT_TRUE(first || bucket_holds(ref, p.second, k)) << "key " << i << " in neither of its buckets";
    if (room) {
      ++first_had_room;
      ASSERT_TRUE(first) << "key " << i << " went to its second bucket while its first had room";
    }
    in_first += first ? 1 : 0;
  }
  EXPECT_GT(first_had_room, n / 2);
  EXPECT_GE(in_first, first_had_room);
}

// One bucket per key (cache_designs::one_bucket_lru, HierarchicalKV's placement): every entry
// lives in its key's one bucket, an insert into a full bucket evicts an entry of that bucket (the
// least recently used: reported, and the size stays) even while other buckets have room, and an
// insert into a bucket with room never evicts.
TEST(CacheOneBucket, EntriesLiveInTheirBucketAndEvictThere) {
  WARPKV_TEST_EXECUTION(ex0);
  if (ex0.where != backend::host) GTEST_SKIP() << "reads the table from the host";
  execution ex = ex0;
  ex.host_tiles = 1;
  using cache_t = kv_cache<std::uint64_t, 32, 4, cache_designs::one_bucket_lru>;
  static_assert(cache_t::ref_type::choices == 1 && cache_t::read_tile_size == 4);
  cache_t cache({.capacity = 128, .value_bytes = 16}, ex);  // 4 buckets of 32
  ASSERT_EQ(cache.capacity(), 128u);
  const auto ref = cache.ref();
  std::map<std::uint64_t, std::size_t> written_at;  // key -> the insert that wrote it (its recency)
  std::size_t evicted_with_room = 0, full_bucket_inserts = 0;
  const std::size_t n = scaled(250, 180);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = key_of<std::uint64_t>(i + 1);
    const auto p = ref.buckets_of(k);
    ASSERT_EQ(p.first, p.second);
    const bool room = bucket_has_room(ref, p.first);
    const std::size_t size_before = cache.size();
    // the least recently written entry of k's bucket: the one LRU must evict when it is full
    std::uint64_t oldest = 0;
    std::size_t oldest_at = ~std::size_t{0};
    for (std::size_t s = p.first * 32; s < p.first * 32 + 32; ++s)
      if (!ref.slot_empty(s) && written_at.at(ref.slot_key(s)) < oldest_at) {
        oldest = ref.slot_key(s);
        oldest_at = written_at.at(oldest);
      }
    std::vector<std::uint64_t> keys{k};
    std::vector<status> st(1);
    cache_evictions<std::uint64_t> ev;
    cache.set(keys, values_for(cache, keys, {i}), st, &ev);
    ASSERT_EQ(st[0], status::inserted);
    ASSERT_TRUE(bucket_holds(ref, p.first, k)) << "key " << i << " not in its bucket";
    written_at[k] = i;
    if (room) {
      ASSERT_TRUE(ev.keys.empty()) << "key " << i << " evicted an entry from a bucket with room";
      ASSERT_EQ(cache.size(), size_before + 1);
    } else {
      ++full_bucket_inserts;
      ASSERT_EQ(ev.keys.size(), 1u) << "key " << i << " into a full bucket";
      EXPECT_EQ(ev.keys[0], oldest) << "key " << i << ": not the bucket's least recently written entry";
      ASSERT_EQ(ref.buckets_of(ev.keys[0]).first, p.first) << "evicted from another bucket";
      ASSERT_EQ(cache.size(), size_before);
      written_at.erase(ev.keys[0]);
      evicted_with_room += size_before < cache.capacity() ? 1 : 0;
    }
  }
  EXPECT_GT(full_bucket_inserts, 0u);
  EXPECT_GT(evicted_with_room, 0u);  // the placement's trade: a full bucket evicts while others have room
  // every entry is where its key says, and is read back
  const auto all = cache.export_entries();
  EXPECT_EQ(all.keys.size(), cache.size());
  for (const std::uint64_t k : all.keys) ASSERT_TRUE(bucket_holds(ref, ref.buckets_of(k).first, k));
  std::vector<status> cs(all.keys.size());
  cache.contains(all.keys, cs);
  for (const status s : cs) ASSERT_EQ(s, status::found);
}

// Lock groups (docs/design/cache.md, "Lock groups"): one_bucket_lru's fast write pass takes a
// tile's writes' bucket locks together. Writes of one bucket in one tile: the lowest lane's joins
// the group, the others run after its release, so with one host tile (the sequential order) a
// batch of inserts into a full bucket evicts the bucket's entries oldest first in index order: op
// j of the batch evicts the j-th least recently written entry. With every lane try-locking the
// shared bucket at once, whichever lane won would write first and evict the oldest.
TEST(CacheLockGroups, WritesOfOneBucketInOneTileKeepIndexOrder) {
  WARPKV_TEST_EXECUTION(ex0);
  if (ex0.where != backend::host) GTEST_SKIP() << "one host tile: the sequential order";
  using cache_t = kv_cache<std::uint64_t, 32, 4, cache_designs::one_bucket_lru>;
  static_assert(cache_t::ref_type::lock_groups);
  for (const unsigned tiles : {1u, 0u}) {  // one host tile, then the default (concurrent tiles)
    execution ex = ex0;
    ex.host_tiles = tiles;
    cache_t cache({.capacity = 128, .value_bytes = 16}, ex);  // 4 buckets of 32
    const auto ref = cache.ref();
    // 32 + 12 keys of bucket 1: the first 32 fill it, one batch each (increasing recency)
    std::vector<std::uint64_t> same;
    for (std::uint64_t i = 1; same.size() < 44; ++i)
      if (ref.buckets_of(key_of<std::uint64_t>(i)).first == 1) same.push_back(key_of<std::uint64_t>(i));
    for (std::size_t j = 0; j < 32; ++j) {
      std::vector<std::uint64_t> one{same[j]};
      std::vector<status> st(1);
      cache.set(one, values_for(cache, one, {j}), st);
      ASSERT_EQ(st[0], status::inserted);
    }
    ASSERT_FALSE(bucket_has_room(ref, 1));
    // one batch of the 12 others: three tiles' worth, every lane's write into bucket 1
    const std::vector<std::uint64_t> batch(same.begin() + 32, same.end());
    std::vector<std::uint64_t> versions(batch.size());
    for (std::size_t j = 0; j < batch.size(); ++j) versions[j] = 100 + j;
    std::vector<status> st(batch.size());
    cache_evictions<std::uint64_t> ev;
    cache.set(batch, values_for(cache, batch, versions), st, &ev);
    for (const status s : st) ASSERT_EQ(s, status::inserted);
    ASSERT_EQ(ev.keys.size(), batch.size());
    std::set<std::uint64_t> evicted(ev.keys.begin(), ev.keys.end());
    EXPECT_EQ(evicted, std::set<std::uint64_t>(same.begin(), same.begin() + 12)) << "the 12 least recently written";
    for (const std::uint64_t k : batch) ASSERT_TRUE(bucket_holds(ref, 1, k));
    if (tiles == 1) {
      for (std::size_t e = 0; e < ev.keys.size(); ++e) {
        EXPECT_EQ(ev.keys[e], same[ev.op_index[e]]) << "op " << ev.op_index[e] << " evicted out of index order";
      }
    }
  }
}

// The sharded count of filled slots (it gates cuckoo moves) equals the filled slots between
// batches, after inserts, assignments, erases, evictions, expiries and cuckoo moves.
TEST(CacheOccupancy, ShardedCountMatchesFilledSlots) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::host) GTEST_SKIP() << "reads the table from the host";
  cache_config cfg;
  cfg.capacity = 128;
  cfg.value_bytes = 8;
  kv_cache<std::uint64_t, 4, 2> cache(cfg, ex);
  std::mt19937_64 rng(5);
  const auto ref = cache.ref();
  std::size_t moved_or_evicted_rounds = 0;
  for (int round = 0; round < static_cast<int>(scaled(40, 16)); ++round) {  // at least 16: fills the cache
    cache.set_time(static_cast<std::uint64_t>(round) + 1);
    const std::size_t m = 64;
    std::vector<std::uint64_t> keys(m), vals(m, 1), exp(m);
    std::vector<cache_op> ops(m);
    for (std::size_t i = 0; i < m; ++i) {
      keys[i] = key_of<std::uint64_t>(1 + rng() % 900);
      const auto r = rng() % 10;
      ops[i] = r < 5 ? cache_op::set : r < 7 ? cache_op::erase : r < 9 ? cache_op::get_or_set : cache_op::add;
      exp[i] = rng() % 4 == 0 ? static_cast<std::uint64_t>(round) + 1 + rng() % 3 : 0;  // some expire soon
    }
    std::vector<std::byte> in(m * 8), out(m * 8);
    std::memcpy(in.data(), vals.data(), in.size());
    std::vector<status> st(m);
    cache_evictions<std::uint64_t> ev;
    cache.execute(ops, keys, in, out, st, &ev, exp);
    if (!ev.keys.empty()) ++moved_or_evicted_rounds;
    std::size_t filled = 0;
    for (std::size_t s = 0; s < cache.capacity(); ++s) filled += ref.slot_empty(s) ? 0 : 1;
    ASSERT_EQ(ref.occupied_slots(), filled) << "round " << round;
  }
  EXPECT_GT(moved_or_evicted_rounds, 0u) << "the sequence never filled the cache";
}

/// A user kernel's sets, one per tile (cache_pass::complete: its gate sums the shards).
template <class Ref>
struct set_one_per_tile {
  Ref ref;
  const std::uint64_t* keys;
  const std::uint64_t* values;
  std::size_t n;
  std::uint64_t stamps;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    if (i < n) (void)ref.set(t, keys[i], values + i, 0, cache_clock{stamps + i, 0, stamps, 0});
  }
};

/// A 1024-slot cache (buckets of 4, tile 4) whose cuckoo moves stop at kick_load_limit, and its
/// inserts of fresh keys (each key its own value; every one must report `inserted`).
struct gated_cache {
  cache_config cfg;
  kv_cache<std::uint64_t, 4, 4> cache;
  std::uint64_t next;
  gated_cache(const execution& ex, int seed, double kick_load_limit)
      : cfg(config(seed, kick_load_limit)), cache(cfg, ex), next(1 + 100000 * static_cast<std::uint64_t>(seed)) {}
  static cache_config config(int seed, double kick_load_limit) {
    cache_config c;
    c.capacity = 1024;
    c.value_bytes = 8;
    c.max_kicks = 5000;
    c.kick_load_limit = kick_load_limit;
    c.seed = static_cast<std::uint64_t>(seed);
    return c;
  }
  [[nodiscard]] std::size_t limit() const {
    return static_cast<std::size_t>(cfg.kick_load_limit * static_cast<double>(cache.capacity()));
  }
  std::vector<std::uint64_t> fresh_keys(std::size_t n) {
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = key_of<std::uint64_t>(next++);
    return keys;
  }
  void insert(std::size_t n, cache_evictions<std::uint64_t>* ev) {
    const std::vector<std::uint64_t> keys = fresh_keys(n);
    std::vector<std::byte> bytes(n * 8);
    std::memcpy(bytes.data(), keys.data(), bytes.size());
    std::vector<status> st(n);
    cache.set(keys, bytes, st, ev);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(st[i], status::inserted);
  }
};

// The cuckoo gate (kick_load_limit): below the limit an insert into two full buckets makes room
// by cuckoo moves instead of evicting; once a batch starts at or above it, no entry moves (inserts
// evict); and the gate follows the count back down. The batch write phase's fast pass reads the
// gate word its gate pass set, and so does its complete pass; a user kernel's writes sum the
// sharded count. A gate read wrongly in any of them
// (an always-closed or stale fast-pass gate evicts below the limit; an always-open one moves
// entries above it) fails here. The split path (statuses: gate pass, fast and complete passes)
// and a user kernel's writes (the complete pass alone), with several concurrent host tiles.
TEST(CacheGate, KicksBelowTheLimitOnlyAndFollowsTheCount) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::host) GTEST_SKIP() << "reads the table from the host";
  for (const int seed : {1, 2, 3}) {
    gated_cache g(ex, seed, 0.75);
    auto& cache = g.cache;
    const auto ref = cache.ref();
    const std::size_t limit = g.limit();
    auto insert = [&](std::size_t n, cache_evictions<std::uint64_t>* ev) { g.insert(n, ev); };
    auto insert_by_kernel = [&](std::size_t n) {
      auto k = buffer<std::uint64_t>::from_host(g.fresh_keys(n), ex);
      using ref_t = kv_cache<std::uint64_t, 4, 4>::ref_type;
      launch<4>(ex, n, simple_body<set_one_per_tile<ref_t>>{{ref, k.data(), k.data(), n, cache.reserve_stamps(n)}});
    };
    auto placement = [&] {
      std::map<std::uint64_t, std::size_t> at;
      for (std::size_t s = 0; s < cache.capacity(); ++s)
        if (!ref.slot_empty(s)) at[ref.slot_key(s)] = s;
      return at;
    };
    // 1. below the limit: never an eviction (moves make room), in batches of 32
    while (ref.occupied_slots() + 32 < limit) {
      cache_evictions<std::uint64_t> ev;
      insert(32, &ev);
      ASSERT_TRUE(ev.keys.empty()) << "seed " << seed << ": evicted at " << ref.occupied_slots() << " of " << cache.capacity()
                                   << " slots filled, below the kick limit " << limit;
    }
    // 2. fill past the limit, then batches that start at or above it: no entry moves (batches
    // of 16 alternating with a user kernel's 16 sets, so both kinds run while the cache fills
    // from the limit to full: moves need empty slots)
    std::size_t evicting_batches = 0;
    for (int b = 0; b < 60; ++b) {
      const bool above = ref.occupied_slots() >= limit;
      const auto before = placement();
      cache_evictions<std::uint64_t> ev;
      if (b % 2 == 0) insert_by_kernel(16);
      else insert(16, &ev);
      if (!above) continue;
      evicting_batches += ev.keys.empty() ? 0 : 1;
      const auto after = placement();
      for (const auto& [k, s] : before) {
        const auto it = after.find(k);
        if (it != after.end()) {
          ASSERT_EQ(it->second, s) << "seed " << seed << ": a cuckoo move ran at or above the kick limit";
        }
      }
    }
    EXPECT_GT(evicting_batches, 0u) << "the cache never filled";
    // 3. erase down to a third, then fill to below the limit again: no eviction
    {
      std::vector<std::uint64_t> keys;
      for (const auto& [k, s] : placement()) keys.push_back(k);
      keys.resize(keys.size() - cache.capacity() / 3);
      std::vector<status> st(keys.size());
      cache.erase(keys, st);
    }
    while (ref.occupied_slots() + 32 < limit) {
      cache_evictions<std::uint64_t> ev;
      insert(32, &ev);
      ASSERT_TRUE(ev.keys.empty()) << "seed " << seed << ": evicted at " << ref.occupied_slots()
                                   << " filled after erasing below the kick limit";
    }
  }
}

// A batch that starts below the kick limit but could cross it (the gate pass's `near`): once the
// count reaches the limit inside the batch, its inserts into full buckets evict instead of walking.
// A gate that stays open for the whole batch (the batch start's count alone) lets them walk until
// the table is full (no eviction here, and up to max_kicks steps each in a full table).
TEST(CacheGate, ABatchThatCrossesTheLimitStopsMovingAtIt) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::host) GTEST_SKIP() << "reads the table from the host";
  for (const int seed : {1, 2, 3}) {
    gated_cache g(ex, seed, 0.6);
    const auto ref = g.cache.ref();
    const std::size_t limit = g.limit();
    auto& cache = g.cache;
    auto insert = [&](std::size_t n, cache_evictions<std::uint64_t>* ev) { g.insert(n, ev); };
    while (ref.occupied_slots() + 16 < limit) insert(16, nullptr);  // batches that stay below it
    ASSERT_LT(ref.occupied_slots(), limit);
    cache_evictions<std::uint64_t> ev;
    insert(256, &ev);  // crosses the limit by far, the table stays well short of full
    EXPECT_LT(ref.occupied_slots(), cache.capacity());
    EXPECT_GT(ev.keys.size(), 0u) << "seed " << seed << ": the batch kept moving entries past the kick limit ("
                                  << ref.occupied_slots() << " of " << cache.capacity() << " filled, limit " << limit << ")";
  }
}

// A batch's hits refresh an entry at most once per batch (the bulk API's touch_below), yet they
// do refresh it: on a two-bucket table (exact LRU) the entries hit in a batch, however often,
// outlive the ones not hit.
TEST(CacheLru, HitsOfABatchRefreshTheirEntries) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 8;  // 2 buckets of 4: the table is every key's candidates
  cfg.value_bytes = 8;
  kv_cache<std::uint64_t, 4, 2> cache(cfg, ex);
  auto set_one = [&](std::uint64_t k, cache_evictions<std::uint64_t>* ev) {
    std::vector<std::uint64_t> keys{k}, val{k};
    std::vector<std::byte> bytes(8);
    std::memcpy(bytes.data(), val.data(), 8);
    std::vector<status> st(1);
    cache.set(keys, bytes, st, ev);
  };
  for (std::uint64_t k = 1; k <= 8; ++k) set_one(k, nullptr);  // 1 is the oldest
  // one batch: key 1 hit 200 times, key 2 once, key 3 ten times
  std::vector<std::uint64_t> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(1);
  keys.push_back(2);
  for (int i = 0; i < 10; ++i) keys.push_back(3);
  std::vector<std::byte> out(keys.size() * 8);
  std::vector<status> st(keys.size());
  cache.get(keys, out, st);
  for (const status s : st) ASSERT_EQ(s, status::found);
  for (std::uint64_t k = 100, expect = 4; expect <= 8; ++k, ++expect) {  // evicts 4..8, oldest first
    cache_evictions<std::uint64_t> ev;
    set_one(k, &ev);
    ASSERT_EQ(ev.keys.size(), 1u);
    EXPECT_EQ(ev.keys[0], expect);
  }
}

// ---- the host submitter -----------------------------------------------------------------
TEST(CacheSubmitter, ManyThreadsGetTheirOwnResults) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 8192;
  cfg.value_bytes = 20;  // values shorter than the stride come back at their own width
  kv_cache<std::uint64_t, 4, 4> cache(cfg, ex);
  cache_submitter<kv_cache<std::uint64_t, 4, 4>> sub(cache, 64);
  const int threads = 4;
  const std::size_t per = scaled(300, 50);
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto value_of = [&](std::uint64_t k) {
        std::vector<std::byte> v(20);
        for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<std::byte>((k * 31 + j) & 0xff);
        return v;
      };
      std::vector<std::future<cache_submitter<kv_cache<std::uint64_t, 4, 4>>::result>> sets, gets;
      for (std::size_t i = 0; i < per; ++i) {
        const std::uint64_t k = key_of<std::uint64_t>(t * 1000000 + i + 1);
        sets.push_back(sub.submit(cache_op::set, k, value_of(k)));
      }
      for (auto& f : sets)
        if (f.get().st != status::inserted) ++failures;  // waits: a later submitter or flush runs the batch
      for (std::size_t i = 0; i < per; ++i) gets.push_back(sub.submit(cache_op::get, key_of<std::uint64_t>(t * 1000000 + i + 1)));
      sub.flush();
      for (std::size_t i = 0; i < per; ++i) {
        const auto r = gets[i].get();
        if (r.st != status::found || r.value != value_of(key_of<std::uint64_t>(t * 1000000 + i + 1))) ++failures;
      }
    });
  }
  // a thread waiting on a future needs a batch to run: flush periodically while submitters work
  std::atomic<bool> done{false};
  std::thread flusher([&] {
    while (!done.load()) {
      sub.flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  for (auto& th : pool) th.join();
  done = true;
  flusher.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(sub.operations(), 2 * threads * per);
  EXPECT_GT(sub.batches(), 1u);
  EXPECT_EQ(cache.size(), threads * per);
  EXPECT_THROW(sub.submit(cache_op::set, 1, std::vector<std::byte>(21)), error);
}

// Several threads submit rounds of operations on their own keys without waiting inside a round,
// so batches fill while others are in flight (2 and 3 buffers, small threshold, a deadline for
// the last partial batch of a round). Between rounds each thread waits for its futures: the next
// round's operations then take effect after the previous round's, so every result is exact.
TEST(CacheSubmitter, ThreadsSubmitWhileBatchesAreInFlight) {
  WARPKV_TEST_EXECUTION(ex);
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  using Sub = cache_submitter<Cache>;
  for (const std::size_t buffers : {std::size_t{2}, std::size_t{3}}) {
    SCOPED_TRACE(::testing::Message() << buffers << " buffers");
    cache_config cfg;
    cfg.capacity = 8192;
    cfg.value_bytes = 24;
    Cache cache(cfg, ex);
    Sub sub(cache, 32, std::chrono::microseconds(300), buffers);
    const int threads = 4;
    const std::size_t per = scaled(250, 40);
    std::atomic<int> failures{0};
    auto value_of = [](std::uint64_t k, std::uint64_t round) {
      std::vector<std::byte> v(24);
      for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<std::byte>((k * 131 + round * 17 + j) & 0xff);
      return v;
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::vector<std::uint64_t> keys(per);
        for (std::size_t i = 0; i < per; ++i) keys[i] = key_of<std::uint64_t>(t * 1000000 + i + 1);
        const std::uint64_t absent = key_of<std::uint64_t>(t * 1000000 + 999999);
        // expect(future, status, value or empty)
        auto expect = [&](std::future<Sub::result>& f, status st, const std::vector<std::byte>& v) {
          const auto r = f.get();
          if (r.st != st || r.value != v) ++failures;
        };
        std::vector<std::future<Sub::result>> a, b;
        for (std::size_t i = 0; i < per; ++i) {  // round 1: get_or_set inserts; a never-set key misses
          a.push_back(sub.submit(cache_op::get_or_set, keys[i], value_of(keys[i], 1)));
          b.push_back(sub.submit(cache_op::contains, absent));
        }
        for (std::size_t i = 0; i < per; ++i) {
          expect(a[i], status::inserted, value_of(keys[i], 1));
          expect(b[i], status::not_found, {});
        }
        a.clear();
        b.clear();
        for (std::size_t i = 0; i < per; ++i) a.push_back(sub.submit(cache_op::set, keys[i], value_of(keys[i], 2)));
        for (std::size_t i = 0; i < per; ++i) expect(a[i], status::assigned, {});
        a.clear();
        for (std::size_t i = 0; i < per; ++i) {  // round 3: reads see round 2's values
          a.push_back(sub.submit(cache_op::get, keys[i]));
          b.push_back(sub.submit(cache_op::get_or_set, keys[i], value_of(keys[i], 3)));
        }
        for (std::size_t i = 0; i < per; ++i) {
          expect(a[i], status::found, value_of(keys[i], 2));
          expect(b[i], status::found, value_of(keys[i], 2));
        }
        a.clear();
        b.clear();
        for (std::size_t i = 0; i < per; ++i) a.push_back(sub.submit(cache_op::erase, keys[i]));
        for (std::size_t i = 0; i < per; ++i) expect(a[i], status::erased, {});
        a.clear();
        for (std::size_t i = 0; i < per; ++i) a.push_back(sub.submit(cache_op::get, keys[i]));
        for (std::size_t i = 0; i < per; ++i) expect(a[i], status::not_found, {});
      });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(sub.operations(), 7 * threads * per);
    EXPECT_LE(sub.peak_in_flight(), buffers);
    EXPECT_GT(sub.bytes_to_device(), 0u);
    EXPECT_GT(sub.bytes_from_device(), 0u);
    EXPECT_EQ(cache.size(), 0u);
  }
}

// With a threshold of 1 every submit launches a batch: with N buffers at most N are ever in
// flight (a submitter waits for one to come back), and with N >= 2 batches do overlap.
TEST(CacheSubmitter, AtMostBuffersBatchesInFlight) {
  WARPKV_TEST_EXECUTION(ex);
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  cache_config cfg;
  cfg.capacity = 4096;
  cfg.value_bytes = 8;
  Cache cache(cfg, ex);
  EXPECT_THROW(cache_submitter<Cache>(cache, 16, std::chrono::microseconds(0), 0), error);
  for (const std::size_t buffers : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    SCOPED_TRACE(::testing::Message() << buffers << " buffers");
    cache.clear();
    cache_submitter<Cache> sub(cache, 1, std::chrono::microseconds(0), buffers);
    EXPECT_EQ(sub.buffers(), buffers);
    const int threads = 6;
    const std::size_t per = scaled(60, 20);
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<std::future<cache_submitter<Cache>::result>> fs;
        for (std::size_t i = 0; i < per; ++i)
          fs.push_back(sub.submit(cache_op::set, key_of<std::uint64_t>(t * 100000 + i + 1), std::vector<std::byte>(8)));
        for (auto& f : fs)
          if (f.get().st != status::inserted) ++failures;
      });
    for (auto& th : pool) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(sub.batches(), threads * per);
    EXPECT_LE(sub.peak_in_flight(), buffers);
    EXPECT_GE(sub.peak_in_flight(), std::min<std::size_t>(buffers, 2));
  }
}

// A batch below the threshold runs when its oldest operation has waited the deadline, with no
// flush(); without a deadline it waits for one.
TEST(CacheSubmitter, DeadlineRunsAPartialBatch) {
  WARPKV_TEST_EXECUTION(ex);
  cache_config cfg;
  cfg.capacity = 64;
  cfg.value_bytes = 8;
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  Cache cache(cfg, ex);
  {
    cache_submitter<Cache> lazy(cache, 1000);
    auto f = lazy.submit(cache_op::set, 7, std::vector<std::byte>(8, std::byte{1}));
    EXPECT_EQ(f.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
    lazy.flush();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(f.get().st, status::inserted);
  }
  cache_submitter<Cache> sub(cache, 1000, std::chrono::milliseconds(2));
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    auto a = sub.submit(cache_op::get, 7);
    auto b = sub.submit(cache_op::contains, 8);
    ASSERT_EQ(a.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "the deadline never ran the batch";
    ASSERT_EQ(b.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2));
    const auto r = a.get();
    EXPECT_EQ(r.st, status::found);
    EXPECT_EQ(r.value, std::vector<std::byte>(8, std::byte{1}));
    EXPECT_EQ(b.get().st, status::not_found);
  }
  EXPECT_GE(sub.batches(), 3u);
}

// ---- the submitter's bulk path ---------------------------------------------------------------
// Each thread keeps a sequential model of its own keys and submits random bulks of random
// operations on them (a key at most once per bulk: one batch's operations are concurrent), sizes
// from 1 to several thresholds, waiting for each bulk before the next; per-operation submits on
// another set of its keys are in flight at the same time. Every status and value is exact.
TEST(CacheSubmitter, BulkManyThreadsExactResults) {
  WARPKV_TEST_EXECUTION(ex);
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  using Sub = cache_submitter<Cache>;
  for (const std::size_t buffers : {std::size_t{2}, std::size_t{3}}) {
    SCOPED_TRACE(::testing::Message() << buffers << " buffers");
    cache_config cfg;
    cfg.capacity = 16384;
    cfg.value_bytes = 20;  // stride 24: the padding stays out of the comparison
    Cache cache(cfg, ex);
    const std::size_t threshold = 64, vb = cfg.value_bytes;
    Sub sub(cache, threshold, std::chrono::microseconds(300), buffers);
    const std::size_t stride = cache.value_stride();
    const int threads = 4;
    const std::size_t pool_keys = 400, rounds = scaled(28, 14);
    const std::size_t sizes[] = {1, 3, 17, threshold, 150, 3 * threshold + 5, 2};
    std::atomic<int> failures{0};
    std::atomic<std::size_t> submitted{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::mt19937_64 rng(1234 + t);
        std::unordered_map<std::uint64_t, std::vector<std::byte>> model;  // bulk keys and single keys alike
        auto apply = [&](cache_op op, std::uint64_t k, const std::vector<std::byte>& v, std::vector<std::byte>& out) {
          const auto it = model.find(k);
          const bool present = it != model.end();
          out.clear();
          switch (op) {
            case cache_op::get:
              if (present) out = it->second;
              return present ? status::found : status::not_found;
            case cache_op::contains: return present ? status::found : status::not_found;
            case cache_op::set: model[k] = v; return present ? status::assigned : status::inserted;
            case cache_op::add:
              if (present) return status::found;
              model[k] = v;
              return status::inserted;
            case cache_op::erase:
              if (present) model.erase(it);
              return present ? status::erased : status::not_found;
            case cache_op::get_or_set:
              if (present) {
                out = it->second;
                return status::found;
              }
              model[k] = v;
              out = v;
              return status::inserted;
          }
          return status::invalid_key;
        };
        std::vector<std::uint64_t> ids(pool_keys);
        for (std::size_t i = 0; i < pool_keys; ++i) ids[i] = t * 1000000 + i + 1;
        for (std::size_t round = 0; round < rounds; ++round) {
          const std::size_t m = sizes[round % std::size(sizes)];
          std::shuffle(ids.begin(), ids.end(), rng);
          std::vector<cache_op> ops(m);
          std::vector<std::uint64_t> keys(m);
          std::vector<std::byte> in(m * stride), out(m * stride, std::byte{0xee});
          std::vector<status> st(m, status::invalid_key);
          std::vector<status> want(m);
          std::vector<std::vector<std::byte>> want_value(m);
          for (std::size_t i = 0; i < m; ++i) {
            ops[i] = static_cast<cache_op>(rng() % 6);
            keys[i] = key_of<std::uint64_t>(ids[i]);
            std::vector<std::byte> v(vb);
            for (auto& b : v) b = static_cast<std::byte>(rng());
            std::memcpy(in.data() + i * stride, v.data(), vb);
            want[i] = apply(ops[i], keys[i], v, want_value[i]);
          }
          // two single operations on keys of this thread no bulk of this round touches
          std::vector<std::future<Sub::result>> singles;
          std::vector<status> single_want;
          std::vector<std::vector<std::byte>> single_value(2);
          for (std::size_t j = 0; j < 2; ++j) {
            const cache_op op = static_cast<cache_op>(rng() % 6);
            const std::uint64_t k = key_of<std::uint64_t>(t * 1000000 + 500000 + (round * 2 + j) % 30);
            std::vector<std::byte> v(vb);
            for (auto& b : v) b = static_cast<std::byte>(rng());
            single_want.push_back(apply(op, k, v, single_value[j]));
            singles.push_back(sub.submit(op, k, v));
          }
          const bool with_values = round % 7 != 3;  // sometimes the caller wants statuses only
          auto f = sub.submit_bulk(ops, keys, in, with_values ? std::span<std::byte>(out) : std::span<std::byte>(), st);
          f.get();
          submitted += m + 2;
          for (std::size_t i = 0; i < m; ++i) {
            if (st[i] != want[i]) ++failures;
            else if (with_values && !want_value[i].empty() && std::memcmp(out.data() + i * stride, want_value[i].data(), vb) != 0)
              ++failures;
          }
          if (!with_values && std::any_of(out.begin(), out.end(), [](std::byte b) { return b != std::byte{0xee}; })) ++failures;
          for (std::size_t j = 0; j < 2; ++j) {
            const auto r = singles[j].get();
            if (r.st != single_want[j] || r.value != single_value[j]) ++failures;
          }
        }
      });
    for (auto& th : pool) th.join();
    EXPECT_EQ(failures.load(), 0);
    sub.flush();
    EXPECT_EQ(sub.operations(), submitted.load());
    EXPECT_LE(sub.peak_in_flight(), buffers);
  }
}

// All threads on a few shared keys, bulks with repeated keys: no exact results, but every value
// read is one that was written whole (a self-checking value) and every status is one its
// operation may return; the keys end with self-checking values.
TEST(CacheSubmitter, BulkSharedHotKeysStayConsistent) {
  WARPKV_TEST_EXECUTION(ex);
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  cache_config cfg;
  cfg.capacity = 1024;
  cfg.value_bytes = 32;
  Cache cache(cfg, ex);
  cache_submitter<Cache> sub(cache, 48, std::chrono::microseconds(200), 2);
  const std::size_t stride = cache.value_stride();
  const std::uint64_t hot = 8;
  auto check_value = [](std::uint64_t k, const std::byte* v) {  // k, writer, k ^ writer * prime, ~k
    std::uint64_t w[4];
    std::memcpy(w, v, 32);
    return w[0] == k && w[2] == (k ^ (w[1] * 0x100000001b3ull)) && w[3] == ~k;
  };
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(99 + t);
      for (std::size_t round = 0; round < scaled(30, 10); ++round) {
        const std::size_t m = 1 + rng() % 120;
        std::vector<cache_op> ops(m);
        std::vector<std::uint64_t> keys(m);
        std::vector<std::byte> in(m * stride), out(m * stride);
        std::vector<status> st(m);
        for (std::size_t i = 0; i < m; ++i) {
          const cache_op choice[] = {cache_op::get, cache_op::set, cache_op::get_or_set, cache_op::add};
          ops[i] = choice[rng() % 4];
          const std::uint64_t k = key_of<std::uint64_t>(1 + rng() % hot), writer = t * 100000 + round * 1000 + i;
          keys[i] = k;
          const std::uint64_t w[4] = {k, writer, k ^ (writer * 0x100000001b3ull), ~k};
          std::memcpy(in.data() + i * stride, w, 32);
        }
        sub.submit_bulk(ops, keys, in, out, st).get();
        for (std::size_t i = 0; i < m; ++i) {
          bool ok = false;
          switch (ops[i]) {
            case cache_op::get: ok = st[i] == status::not_found || (st[i] == status::found && check_value(keys[i], out.data() + i * stride)); break;
            case cache_op::set: ok = st[i] == status::inserted || st[i] == status::assigned; break;
            case cache_op::add: ok = st[i] == status::inserted || st[i] == status::found; break;
            default:
              ok = (st[i] == status::inserted || st[i] == status::found) && check_value(keys[i], out.data() + i * stride);
          }
          if (!ok) ++failures;
        }
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (std::uint64_t id = 1; id <= hot; ++id) {
    auto r = sub.submit(cache_op::get, key_of<std::uint64_t>(id));
    sub.flush();
    const auto got = r.get();
    if (got.st == status::found) {
      EXPECT_TRUE(check_value(key_of<std::uint64_t>(id), got.value.data()));
    }
  }
}

// A bulk of 5 thresholds and a bit with 1 and 2 buffers: it seals and launches batches while it is
// queued (waiting for buffers to come back), its tail waits in the filling batch (no deadline)
// until flush(), then every result is there.
TEST(CacheSubmitter, BulkSplitAcrossBatches) {
  WARPKV_TEST_EXECUTION(ex);
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  cache_config cfg;
  cfg.capacity = 4096;
  cfg.value_bytes = 16;
  for (const std::size_t buffers : {std::size_t{1}, std::size_t{2}}) {
    SCOPED_TRACE(::testing::Message() << buffers << " buffers");
    Cache cache(cfg, ex);
    const std::size_t threshold = 16, m = 5 * threshold + 3;
    cache_submitter<Cache> sub(cache, threshold, std::chrono::microseconds(0), buffers);
    const std::size_t stride = cache.value_stride();
    std::vector<std::uint64_t> keys(m);
    std::vector<cache_op> sets(m, cache_op::set), gets(m, cache_op::get);
    std::vector<std::byte> in(m * stride), out(m * stride);
    for (std::size_t i = 0; i < m; ++i) {
      keys[i] = key_of<std::uint64_t>(i + 1);
      for (std::size_t j = 0; j < stride; ++j) in[i * stride + j] = static_cast<std::byte>(i * 7 + j);
    }
    std::vector<status> st(m, status::invalid_key);
    auto f = sub.submit_bulk(sets, keys, in, {}, st);
    for (int i = 0; i < 2000 && sub.batches() < 5; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(sub.batches(), 5u);
    EXPECT_EQ(f.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout)
        << "its last 3 operations wait for a flush";
    sub.flush();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    f.get();
    EXPECT_EQ(std::count(st.begin(), st.end(), status::inserted), static_cast<std::ptrdiff_t>(m));
    auto g = sub.submit_bulk(gets, keys, {}, out, st);
    sub.flush();
    g.get();
    EXPECT_EQ(std::count(st.begin(), st.end(), status::found), static_cast<std::ptrdiff_t>(m));
    EXPECT_EQ(out, in);
    EXPECT_EQ(sub.batches(), 12u);
    EXPECT_EQ(sub.operations(), 2 * m);
    // a batch holding pieces of several bulks, and a bulk of one
    std::vector<status> a(3), b(1);
    auto fa = sub.submit_bulk(std::span(gets).first(3), std::span(keys).first(3), {}, {}, a);
    auto fb = sub.submit_bulk(std::span(gets).first(1), std::span(keys).last(1), {}, {}, b);
    sub.flush();
    fa.get();
    fb.get();
    EXPECT_EQ(a, std::vector<status>(3, status::found));
    EXPECT_EQ(b[0], status::found);
    EXPECT_EQ(sub.batches(), 13u);
  }
}

// Bad arguments throw warpkv::error naming the argument, before anything is queued.
TEST(CacheSubmitter, BulkBadArgumentsQueueNothing) {
  WARPKV_TEST_EXECUTION(ex);
  using Cache = kv_cache<std::uint64_t, 4, 4>;
  cache_config cfg;
  cfg.capacity = 256;
  cfg.value_bytes = 12;
  Cache cache(cfg, ex);
  cache_submitter<Cache> sub(cache, 4, std::chrono::microseconds(0), 2);
  const std::size_t n = 10, stride = cache.value_stride();
  ASSERT_EQ(stride, 16u);
  std::vector<cache_op> ops(n, cache_op::set);
  std::vector<std::uint64_t> keys(n, 5);
  std::vector<std::byte> in(n * stride), out(n * stride);
  std::vector<status> st(n);
  std::vector<std::uint64_t> exp(n, 0);
  expect_invalid([&] { (void)sub.submit_bulk(ops, std::span(keys).first(n - 1), in, out, st); }, "keys");
  expect_invalid([&] { (void)sub.submit_bulk(ops, keys, in, out, std::span(st).first(1)); }, "statuses");
  expect_invalid([&] { (void)sub.submit_bulk(ops, keys, std::span(in).first(n * 12), out, st); }, "values_in");  // value_bytes, not the stride
  expect_invalid([&] { (void)sub.submit_bulk(ops, keys, {}, out, st); }, "values_in");  // sets need values
  expect_invalid([&] { (void)sub.submit_bulk(ops, keys, in, std::span(out).first(8), st); }, "values_out");
  expect_invalid([&] { (void)sub.submit_bulk(ops, keys, in, out, st, std::span(exp).first(3)); }, "expires_at");
  ops[7] = static_cast<cache_op>(42);
  expect_invalid([&] { (void)sub.submit_bulk(ops, keys, in, out, st); }, "ops");
  sub.flush();
  EXPECT_EQ(sub.operations(), 0u);
  EXPECT_EQ(sub.batches(), 0u);
  EXPECT_EQ(cache.size(), 0u);
  // an empty bulk is ready at once; reads without values_out are fine (statuses only)
  auto e = sub.submit_bulk({}, {}, {}, {}, {});
  EXPECT_EQ(e.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  std::vector<cache_op> reads(n, cache_op::get);
  std::fill(st.begin(), st.end(), status::invalid_key);
  auto r = sub.submit_bulk(reads, keys, {}, {}, st);
  sub.flush();
  r.get();
  EXPECT_EQ(st, std::vector<status>(n, status::not_found));
}

#if WARPKV_HAS_CUDA
// Issue 25's register budget for the cache's hot kernels: the read phase (gets, contains,
// get_or_set hits) and the write phase's fast pass (set, add, erase, get_or_set's locked path,
// evictions; cuckoo walks left to the complete pass) stay within their refs' budgets (64
// registers: four blocks of 256 threads per SM, where the kernel serving every operation and
// every design at run time took 254 for 24-byte keys) with no local memory. The default design
// with u64 keys (HierarchicalKV's setting) and with YCSB's byte_key<32>, the seed's design, and
// one bucket per key (one_bucket_lru at W 32, tile 4).
template <class Cache>
void expect_cache_kernels_within_budget(const char* name) {
  using R = typename Cache::ref_type;
  using RR = typename Cache::read_ref_type;  // the read phase's tile (read_tile_size)
  constexpr int T = Cache::tile_size, TR = Cache::read_tile_size;
  cudaFuncAttributes read{}, write{};
  EXPECT_EQ(cudaFuncGetAttributes(&read, detail::tile_kernel<TR, detail::cache_phase_body<TR, detail::cache_read_op<RR>>>),
            cudaSuccess);
  EXPECT_EQ(cudaFuncGetAttributes(
                &write, detail::tile_kernel<T, detail::cache_phase_body<T, detail::cache_write_op<R, cache_pass::fast>>>),
            cudaSuccess);
  for (const auto& [what, a, budget] :
       {std::tuple{"read", read, R::find_register_budget}, std::tuple{"write", write, R::hot_register_budget}}) {
    EXPECT_LE(a.numRegs, budget) << name << " " << what;
    EXPECT_EQ(a.localSizeBytes, 0u) << name << " " << what;
    std::cout << "[ registers ] " << name << " " << what << " " << a.numRegs << " (local " << a.localSizeBytes << " B)\n";
  }
}

TEST(CacheKernels, HotPathsKeepTheirRegisterBudget) {
  WARPKV_TEST_EXECUTION(ex);
  if (ex.where != backend::cuda) GTEST_SKIP() << "kernel attributes are read on the GPU";
  expect_cache_kernels_within_budget<kv_cache<std::uint64_t, 8>>("u64 W=8 optimistic_lru");
  expect_cache_kernels_within_budget<kv_cache<byte_key<32>, 8>>("byte_key<32> W=8 optimistic_lru");
  expect_cache_kernels_within_budget<ccht_cache<std::uint64_t>>("u64 ccht");
  expect_cache_kernels_within_budget<kv_cache<std::uint64_t, 32, 4, cache_designs::one_bucket_lru>>("u64 W=32 T=4 one_bucket_lru");
}
#endif

}  // namespace
}  // namespace warpkv::testing
