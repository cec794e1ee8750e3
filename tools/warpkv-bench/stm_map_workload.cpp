// warpkv-bench stm --workloads map: a data structure where an STM is the natural tool.
//
// A bucketed hash set of 32-bit keys: K buckets of 15 keys and a count (64 bytes, one STM
// object each). Two operations: lookup(a) (one bucket, read-only) and rename(a -> b), which
// removes a and inserts b atomically (two buckets; nothing happens when a is absent, b is
// present, or b's bucket is full). The same structure is run twice on the same operation
// stream: with each operation a warpkv::stm transaction, and with per-bucket spin locks taken
// in index order (what a user writes without an STM). Verified after every run: every key sits
// in its own bucket, no key is duplicated, the key count is unchanged.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench.hpp"
#include "stm_common.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/stm/stm.hpp"

namespace warpkv_bench {

namespace {

using namespace stm_bench;
namespace stm = warpkv::stm;

constexpr int bucket_keys = 15;
struct bucket {
  std::uint32_t count;
  std::uint32_t keys[bucket_keys];  // keys[0, count) are live; key 0 is never used
};
static_assert(sizeof(bucket) == 64);
constexpr unsigned bucket_words = sizeof(bucket) / 8;

WARPKV_HD inline std::size_t bucket_of(std::uint32_t key, std::size_t k) { return static_cast<std::size_t>(mix(key) % k); }

WARPKV_HD inline int slot_of(const bucket& b, std::uint32_t key) {
  for (std::uint32_t s = 0; s < b.count && s < bucket_keys; ++s)
    if (b.keys[s] == key) return static_cast<int>(s);
  return -1;
}

/// Operation i: a rename with probability update_percent, else a lookup; keys in [1, 2M].
struct map_op {
  bool rename;
  std::uint32_t a, b;
};
WARPKV_HD inline map_op make_op(u64 seed, u64 i, unsigned update_percent, std::uint32_t key_space) {
  const u64 r = mix(seed ^ (i * 0xd1b54a32d192ed03ull));
  return {r % 100 < update_percent, static_cast<std::uint32_t>(1 + (r >> 8) % key_space),
          static_cast<std::uint32_t>(1 + mix(r) % key_space)};
}

/// Applies rename(a -> b) to private copies; returns the buckets to write back (0, 1 or 2).
WARPKV_HD inline int apply_rename(bucket& from, bucket& to, bool same, std::uint32_t a, std::uint32_t b) {
  const int sa = slot_of(from, a);
  if (sa < 0 || slot_of(to, b) >= 0) return 0;
  if (same) {
    from.keys[sa] = b;
    return 1;
  }
  if (to.count >= static_cast<std::uint32_t>(bucket_keys)) return 0;
  from.keys[sa] = from.keys[from.count - 1];
  from.keys[--from.count] = 0;
  to.keys[to.count++] = b;
  return 2;
}

struct map_counts {
  ull attempts = 0, commits = 0, renames = 0, hits = 0;
};
WARPKV_HD inline void flush_map_counts(const map_counts& c, ull* out) {
  const ull v[4] = {c.attempts, c.commits, c.renames, c.hits};
  for (int k = 0; k < 4; ++k)
    if (v[k] != 0) atomic_ref<ull>(out[k]).fetch_add(v[k], memory_order::relaxed);
}

struct map_stm_body {
  using accumulator = map_counts;
  stm::heap_ref<bucket, stm::mode::opaque> buckets;
  u64 seed;
  unsigned update_percent;
  std::uint32_t key_space;
  std::size_t items, chunk;
  ull* stats;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index, accumulator& acc) const {
    const std::size_t k = buckets.size();
    WARPKV_BENCH_FOR_ITEMS(i) {
      const map_op op = make_op(seed, i, update_percent, key_space);
      const std::size_t ia = bucket_of(op.a, k), ib = bucket_of(op.b, k);
      stm::transaction<bucket, stm::mode::opaque, 2, 2> tx(buckets, seed ^ i);
      int outcome = 0;
      const stm::tx_status s = stm::atomically(tx, [&](auto& x) {
        outcome = 0;
        bucket from{};
        if (!x.read(ia, from)) return;
        if (!op.rename) {
          outcome = slot_of(from, op.a) >= 0 ? 1 : 0;
          return;
        }
        bucket to = from;
        if (ib != ia && !x.read(ib, to)) return;
        outcome = apply_rename(from, to, ib == ia, op.a, op.b);
        if (outcome >= 1) x.write(ia, from);
        if (outcome == 2) x.write(ib, to);
      });
      acc.attempts += tx.attempts();
      if (s == stm::tx_status::committed) {
        ++acc.commits;
        if (op.rename) acc.renames += outcome > 0 ? 1 : 0;
        else acc.hits += static_cast<ull>(outcome);
      }
    }
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    flush_map_counts(acc, stats);
  }
};

/// The same structure as 8 words per bucket in a plain buffer, one spin lock per bucket.
struct map_lock_body {
  using accumulator = map_counts;
  u64* words;
  unsigned* locks;
  std::size_t k;
  u64 seed;
  unsigned update_percent;
  std::uint32_t key_space;
  std::size_t items, chunk;
  ull* stats;
  WARPKV_HD bucket load(std::size_t i) const {  // relaxed word loads: the bucket's lock orders them
    u64 w[bucket_words];
    for (unsigned j = 0; j < bucket_words; ++j) w[j] = atomic_ref<u64>(words[i * bucket_words + j]).load(memory_order::relaxed);
    return stm::detail::from_words<bucket>(w);
  }
  WARPKV_HD void store(std::size_t i, const bucket& b) const {
    u64 w[bucket_words];
    stm::detail::to_words(b, w);
    for (unsigned j = 0; j < bucket_words; ++j) atomic_ref<u64>(words[i * bucket_words + j]).store(w[j], memory_order::relaxed);
  }
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index, accumulator& acc) const {
    WARPKV_BENCH_FOR_ITEMS(i) {
      const map_op op = make_op(seed, i, update_percent, key_space);
      const std::size_t ia = bucket_of(op.a, k), ib = op.rename ? bucket_of(op.b, k) : ia;
      const std::size_t lo = ia < ib ? ia : ib, hi = ia < ib ? ib : ia;
      spin_lock(locks + lo);
      if (hi != lo) spin_lock(locks + hi);
      bucket from = load(ia);
      if (!op.rename) {
        acc.hits += slot_of(from, op.a) >= 0 ? 1 : 0;
      } else {
        bucket to = ib == ia ? from : load(ib);
        const int outcome = apply_rename(from, to, ib == ia, op.a, op.b);
        if (outcome >= 1) store(ia, from);
        if (outcome == 2) store(ib, to);
        acc.renames += outcome > 0 ? 1 : 0;
      }
      if (hi != lo) spin_unlock(locks + hi);
      spin_unlock(locks + lo);
      ++acc.attempts;
      ++acc.commits;
    }
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    flush_map_counts(acc, stats);
  }
};

#undef WARPKV_BENCH_FOR_ITEMS

/// The initial set: keys 1, 3, 5, ... (M of them, skipping any whose bucket is full).
std::vector<bucket> initial_buckets(std::size_t k, std::size_t m, std::size_t& placed) {
  std::vector<bucket> b(k, bucket{});
  placed = 0;
  for (std::size_t j = 0; j < m; ++j) {
    const auto key = static_cast<std::uint32_t>(2 * j + 1);
    bucket& x = b[bucket_of(key, k)];
    if (x.count < static_cast<std::uint32_t>(bucket_keys)) {
      x.keys[x.count++] = key;
      ++placed;
    }
  }
  return b;
}

/// Structure check: every key in its own bucket, no duplicates, `expected` keys in all.
bool well_formed(const std::vector<bucket>& b, std::size_t expected, std::string& why) {
  std::unordered_set<std::uint32_t> seen;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b[i].count > static_cast<std::uint32_t>(bucket_keys)) return why = strf("bucket %zu count %u", i, b[i].count), false;
    for (std::uint32_t s = 0; s < b[i].count; ++s) {
      const std::uint32_t key = b[i].keys[s];
      if (key == 0 || bucket_of(key, b.size()) != i) return why = strf("key %u in wrong bucket %zu", key, i), false;
      if (!seen.insert(key).second) return why = strf("key %u duplicated", key), false;
    }
  }
  if (seen.size() != expected) return why = strf("%zu keys, expected %zu", seen.size(), expected), false;
  return true;
}

}  // namespace

namespace stm_bench {
int run_stm_map(stm_session& se, const common_options& co, const stm_options& so, std::vector<table_row>& rows) {
  int failures = 0;
  const std::vector<std::uint64_t> sizes =
      !so.map_buckets.empty() ? so.map_buckets
                              : (se.cuda() ? std::vector<std::uint64_t>{1024, 65536, 1048576} : std::vector<std::uint64_t>{64, 1024});
  const std::size_t ops = so.map_ops != 0 ? so.map_ops : (se.cuda() ? std::size_t{1} << 22 : std::size_t{1} << 14);
  const execution& ex = se.ex();
  buffer<ull> stats(4, ex);
  for (const std::uint64_t k64 : sizes) {
    if (k64 < 1 || k64 > (std::uint64_t{1} << 26))
      throw warpkv::error(warpkv::errc::invalid_argument, "warpkv-bench stm: --map-buckets must be in [1, 2^26]");
    const std::size_t k = static_cast<std::size_t>(k64);
    const std::size_t m = k * 7;  // load 7/15: a full bucket is rare, renames mostly succeed
    const auto key_space = static_cast<std::uint32_t>(2 * m);
    std::size_t placed = 0;
    const std::vector<bucket> init = initial_buckets(k, m, placed);
    for (const unsigned up : so.map_update_percents) {
      const auto report = [&](const std::string& variant, const timing_stats& t, const std::vector<bucket>& after) {
        const std::vector<ull> st = stats.to_vector();  // the last run's counters
        std::string why;
        const bool ok = well_formed(after, placed, why) && st[1] == ops;
        record r = se.base("stm-map", variant);
        r.set("buckets", k).set("keys", placed).set("operations", ops).set("update_percent", up);
        add_timing(r, t, ops);
        r.set("mops_per_s", t.median_ms > 0 ? static_cast<double>(ops) / (t.median_ms * 1e3) : 0.0);
        r.set("renames_applied", st[2]).set("lookup_hits", st[3]).set("attempts", st[0]);
        r.set("abort_ratio", st[0] > 0 ? static_cast<double>(st[0] - st[1]) / static_cast<double>(st[0]) : 0.0);
        r.set("verified", ok);
        emit(r);
        rows.push_back({strf("map k=%zu upd=%u%% %s", k, up, variant.c_str()), ops, t.median_ms, ok});
        if (!ok) {
          ++failures;
          progress(strf("FAILED: stm map %s k=%zu: %s (commits %llu of %zu)", variant.c_str(), k, why.c_str(), st[1], ops));
        }
      };
      {
        stm::heap<bucket, stm::mode::opaque> h(k, ex);
        const timing_stats t = se.measure([&](int) { h.assign(init); zero_stats(stats); },
                                          [&](int r) {
                                            se.run(ops, map_stm_body{h.ref(), co.seed + static_cast<u64>(r), up, key_space, 0, 0,
                                                                     stats.data()});
                                          });
        report("stm-opaque", t, h.to_vector());
      }
      {
        buffer<u64> words(k * bucket_words, ex);
        buffer<unsigned> locks(k, ex);
        std::vector<u64> init_words(k * bucket_words);
        for (std::size_t i = 0; i < k; ++i) stm::detail::to_words(init[i], init_words.data() + i * bucket_words);
        const std::vector<unsigned> unlocked(k, 0);
        const timing_stats t = se.measure(
            [&](int) {
              words.copy_from_host(init_words.data(), init_words.size());
              locks.copy_from_host(unlocked.data(), k);
              zero_stats(stats);
            },
            [&](int r) {
              se.run(ops, map_lock_body{words.data(), locks.data(), k, co.seed + static_cast<u64>(r), up, key_space, 0, 0,
                                        stats.data()});
            });
        const std::vector<u64> w = words.to_vector();
        std::vector<bucket> after(k);
        for (std::size_t i = 0; i < k; ++i) after[i] = stm::detail::from_words<bucket>(w.data() + i * bucket_words);
        report("bucket-locks", t, after);
      }
    }
    progress(strf("stm map: %zu buckets done", k));
  }
  return failures;
}
}  // namespace stm_bench

}  // namespace warpkv_bench
